/**
 * The shared assertion that an error answer tells the client why, and nothing about the
 * inside: exactly `{ "details": string, "code": <registry code> }`, with no stack frame,
 * file path, SQL or internal exception text in it.
 *
 * It throws a plain `Error` (not a vitest assertion) so fast-check properties, plain
 * scripts (`scripts/fuzz-long.ts`) and vitest tests can all use it.
 */
import { ERRORS } from '../../src/errors.js';

/** One kind of leak and the patterns that betray it. */
interface LeakRule {
  what: string;
  patterns: readonly RegExp[];
}

/**
 * What must never reach a client. The patterns are chosen not to match our own answers:
 * "must be at most 5 items" has "at " but is not a frame, so frames are recognised by
 * their shape (`at fn (file:1:2)`, a line that starts with `at `).
 */
const RULES: readonly LeakRule[] = [
  {
    what: 'a stack trace',
    patterns: [/(^|\n)\s*at\s/, /\bat\s+(async\s+)?(new\s+)?[\w$.<>[\]]+\s+\(/, /:\d+:\d+\)?(\s|$)/, /<anonymous>/],
  },
  {
    what: 'a file path',
    patterns: [/\/src\//, /\/node_modules\//, /\.ts:/, /\.js:/, /\.[cm]js\b/, /file:\/\//, /[A-Za-z]:\\/],
  },
  {
    what: 'an SQL fragment',
    patterns: [
      /\bSELECT\b/,
      /\bINSERT\b/,
      /\bUPDATE\b\s+\w/,
      /\bDELETE\s+FROM\b/,
      /sqlite/i,
      /postgres/i,
      /syntax error/i,
      /\brelation\s+"/,
      /duplicate key/i,
      /violates .* constraint/i,
      /invalid byte sequence/i,
    ],
  },
  {
    what: 'internal exception text',
    patterns: [
      /\b(Type|Reference|Range|Syntax|URI|Eval|Aggregate)Error\b/,
      /Cannot read propert/,
      /is not a function/,
      /is not defined/,
      /undefined is not/,
      /Maximum call stack/,
      /Unexpected (token|end of JSON)/,
      /in JSON at position/,
      /\bE[A-Z]{3,}\b:/, // ECONNREFUSED:, EPIPE:, ...
      /\bECONN(REFUSED|RESET|ABORTED)\b/,
      /\[object Object\]/,
      /Failed to decode param/,
    ],
  },
];

/**
 * Returns what is wrong with an error answer's raw body, or `null` when it is a clean
 * `{ "details": "<text>", "code": "<CODE>" }` with a code of the error registry. Given the
 * answer's `status`, the code must be one the registry gives that status.
 */
export function leakProblem(rawBody: string, status?: number): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    return `body is not JSON: ${JSON.stringify(rawBody.slice(0, 200))}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return `body is not a JSON object: ${rawBody.slice(0, 200)}`;
  }
  const keys = Object.keys(parsed);
  if (keys.join() !== 'details,code') return `body keys are [${keys.join(', ')}], not exactly [details, code]`;
  const { details, code } = parsed as { details: unknown; code: unknown };
  if (typeof code !== 'string' || !Object.hasOwn(ERRORS, code)) return `code ${JSON.stringify(code)} is not in the error registry`;
  const registered = ERRORS[code as keyof typeof ERRORS].status;
  if (status !== undefined && registered !== status) return `code ${code} is a ${registered}, answered with ${status}`;
  if (typeof details !== 'string') return `details is a ${typeof details}, not a string`;
  if (details === '') return 'details is empty';
  // The raw text is checked too: an escaped newline or path hides in neither form alone.
  for (const rule of RULES) {
    for (const pattern of rule.patterns) {
      if (pattern.test(details) || pattern.test(rawBody)) {
        return `details contains ${rule.what} (${String(pattern)}): ${JSON.stringify(details.slice(0, 300))}`;
      }
    }
  }
  return null;
}

/**
 * Throws unless `rawBody` is exactly `{ "details": string, "code": <registry code> }` with
 * nothing internal in it. Pass the body text as received (supertest: `res.text`), not a
 * re-serialised object, and the status to check the code against.
 */
export function assertNoLeak(rawBody: string, status?: number): void {
  const problem = leakProblem(rawBody, status);
  if (problem !== null) throw new Error(`error body leaks or is malformed: ${problem}`);
}
