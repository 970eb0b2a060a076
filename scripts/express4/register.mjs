/**
 * `node --import` entry of the suite's Express 4 run (see run.mjs): registers the resolve
 * hook below in every Node process that inherits NODE_OPTIONS, so the hosts the tests start
 * as child processes (tsx fixtures, the demo under `npm start`) load Express 4 as well.
 */
import { register } from 'node:module';

register('./resolve-hook.mjs', import.meta.url);
