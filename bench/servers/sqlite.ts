/** Router server with SQLite storage on the file named by BENCH_SQLITE_PATH (default synchronous mode). */
import { startRouterServer } from './router-host.js';
import { openBenchStorage } from './storages.js';

const { storage, after } = await openBenchStorage('sqlite');
await startRouterServer(storage, after);
