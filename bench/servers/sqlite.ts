/** Router server with SQLite storage on the file named by BENCH_SQLITE_PATH (default synchronous mode). */
import { SqliteStorage } from '../../src/sqlite.js';
import { startRouterServer } from './router-host.js';

const path = process.env.BENCH_SQLITE_PATH;
if (path === undefined || path === '') throw new Error('BENCH_SQLITE_PATH is required');
await startRouterServer(new SqliteStorage({ path }));
