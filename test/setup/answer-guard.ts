/**
 * Runs around every test file: fails a test during which a gateway built by the test
 * helpers (`createGateway`) gave an answer that does not match the OpenAPI document it
 * serves (see `test/helpers/answers.ts`).
 */
import { afterEach, expect } from 'vitest';
import { answerProblems } from '../helpers/answers.js';

afterEach(() => {
  const problems = answerProblems.splice(0);
  expect(problems, 'answers that do not match the OpenAPI document').toEqual([]);
});
