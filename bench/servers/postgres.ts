/** Router server with PostgreSQL storage in the schema BENCH_PG_SCHEMA (see storages.ts). */
import { startRouterServer } from './router-host.js';
import { openBenchStorage } from './storages.js';

const { storage, after } = await openBenchStorage('postgres');
await startRouterServer(storage, after);
