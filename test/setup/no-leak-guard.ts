/**
 * Runs around every test file: fails a test during which a gateway built by
 * `createGateway` answered an error that leaks an internal detail (see `no-leak.ts`).
 */
import { afterEach, expect } from 'vitest';
import { leakedAnswers } from '../helpers/gateway.js';

afterEach(() => {
  const leaks = leakedAnswers.splice(0);
  expect(leaks, 'error answers that leak an internal detail').toEqual([]);
});
