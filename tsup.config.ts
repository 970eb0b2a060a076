import { defineConfig } from 'tsup';

// One entry per public import path; the optional adapters stay in their own files so a
// host that never imports `sms-outbox/sqlite` never loads better-sqlite3.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    sqlite: 'src/sqlite.ts',
    postgres: 'src/postgres.ts',
    mysql: 'src/mysql.ts',
    testing: 'src/testing.ts',
    smpp: 'src/smpp.ts',
    dashboard: 'src/dashboard.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // Maps without the sources in them: `node --enable-source-maps` still names the TypeScript
  // file and line of every stack frame, and the package is not twice its size in copies of
  // src/ nobody reads (README "Install").
  sourcemap: true,
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
  target: 'node20',
  // `import.meta.url` in the CommonJS build too (util/require-peer.ts needs its own location).
  shims: true,
  external: ['express', 'better-sqlite3', 'pg', 'mysql2', 'smpp'],
});
