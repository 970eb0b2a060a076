/**
 * The suite's configuration with `express` aliased to the `express4` package, for the
 * Express 4 run (run.mjs). Test files and the sources they import are resolved by Vite,
 * which Node's resolve hooks never see, hence the alias here as well as the hook.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    root: fileURLToPath(new URL('../..', import.meta.url)),
    resolve: { alias: [{ find: /^express(?=$|\/)/, replacement: 'express4' }] },
  }),
);
