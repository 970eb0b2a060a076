/**
 * Runs a runner-agnostic contract suite (the storage suite, the record-store suite) through
 * a collecting `describe`/`it` shim, so that its failures are captured rather than reported:
 * for the tests that prove a suite fails deliberately broken adapters.
 */
import type { StorageSuiteHarness } from '../../src/testing.js';

/** What one run of a suite gave: the failed cases with their messages, and how many ran. */
export interface SuiteRun {
  ran: number;
  failed: { name: string; message: string }[];
}

/** One case of the suite as the shim collected it. */
interface Collected {
  name: string;
  fn: (this: unknown, context: unknown) => Promise<void> | void;
}

/**
 * Registers a suite with `register(harness)`, then runs each of its cases whose full name
 * (describe blocks joined by ` > `) `only` matches, if given; failed cases are named without
 * `prefix`.
 */
export async function runCollected(register: (harness: StorageSuiteHarness) => void, { only, prefix = '' }: { only?: RegExp; prefix?: string } = {}): Promise<SuiteRun> {
  const collected: Collected[] = [];
  const path: string[] = [];
  register({
    describe: (name, fn) => {
      path.push(name);
      fn();
      path.pop();
    },
    it: (name, fn) => void collected.push({ name: [...path, name].join(' > '), fn: fn as Collected['fn'] }),
  });
  const run: SuiteRun = { ran: 0, failed: [] };
  for (const test of collected) {
    if (only !== undefined && !only.test(test.name)) continue;
    run.ran++;
    const context = { skip: () => undefined };
    try {
      await test.fn.call(context, context);
    } catch (error) {
      const name = test.name.startsWith(prefix) ? test.name.slice(prefix.length) : test.name;
      run.failed.push({ name, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return run;
}

/** `inner` with some of its methods replaced: the others, optional ones included, pass through. */
export function wrap<T extends object>(inner: T, overrides: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(inner, {
    get(target, name, receiver) {
      if (Object.hasOwn(overrides, name)) return overrides[name as keyof T];
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
