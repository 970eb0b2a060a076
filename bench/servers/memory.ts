/** Router server with the default in-memory storage. */
import { MemoryStorage } from '../../src/index.js';
import { startRouterServer } from './router-host.js';

await startRouterServer(new MemoryStorage());
