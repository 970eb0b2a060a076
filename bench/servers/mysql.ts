/** Router server on the MariaDB record store under the table prefix BENCH_MYSQL_PREFIX (see storages.ts). */
import { startRouterServer } from './router-host.js';
import { openBenchStorage } from './storages.js';

const { storage, after } = await openBenchStorage('mysql');
await startRouterServer(storage, after);
