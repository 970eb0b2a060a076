import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every error body a test's gateway answers is checked for leaks (test/setup/no-leak-guard.ts),
    // and every answer against the OpenAPI document (test/setup/answer-guard.ts).
    setupFiles: ['test/setup/no-leak-guard.ts', 'test/setup/answer-guard.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Child-process crash tests and database tests share real services; keep files
    // in separate workers but not so many that two cores thrash.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
