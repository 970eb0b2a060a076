/**
 * Checks of what the host passes in, made once at construction so that a mistake fails at
 * start-up with a message naming it, not at every request.
 *
 * Adapters (storage, delivery) are objects the router calls methods on for its whole life.
 * One that lacks a method would fail every request or every worker step with a bare
 * `... is not a function`, far from the option that caused it, so each is checked once,
 * when the router is built, and the error says what was passed instead.
 */
import { OptionError } from '../errors.js';

/**
 * Every method of a contract `T` (its other properties are not checked): `true` when
 * required, `false` when optional. A table typed with `satisfies MethodTable<Storage>` must
 * list each method of the interface and nothing else, so a method added to the contract
 * cannot be forgotten here.
 */
export type MethodTable<T> = {
  [K in keyof T as NonNullable<T[K]> extends (...args: never[]) => unknown ? K : never]-?: object extends Pick<T, K> ? false : true;
};

/** What `value` is, for an error message: never its contents, which may hold secrets. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return value.name ? `the function ${value.name}` : 'a function';
  if (typeof value === 'object') {
    if (typeof (value as { then?: unknown }).then === 'function') return 'a Promise';
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' && name !== '' && name !== 'Object' ? `an instance of ${name}` : 'an object';
  }
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** True for a class (or an old-style constructor) whose instances would have `methods`. */
function isConstructorOf(value: Function, methods: readonly string[]): boolean {
  if (/^class\b/.test(Function.prototype.toString.call(value))) return true;
  const prototype = (value as { prototype?: Record<string, unknown> }).prototype;
  return prototype !== undefined && methods.some((name) => typeof prototype[name] === 'function');
}

/**
 * Throws a TypeError unless `value` is an object with every required method of `methods`
 * (and, of the optional ones, nothing that is not a function). `where` names the option
 * (`createSmsRouter: \`storage\``), `contract` the interface (`Storage`).
 *
 * The common mistakes get their own hint: a class instead of an instance (`did you mean
 * new MemoryStorage()?`), a factory instead of what it returns, and a Promise (an async
 * factory's result, not awaited).
 */
export function assertAdapter(where: string, value: unknown, methods: Readonly<Record<string, boolean>>, contract: string): void {
  const names = Object.keys(methods);
  if (typeof value === 'function') {
    const name = value.name;
    if (isConstructorOf(value, names)) {
      const args = value.length === 0 ? '' : '...';
      throw adapterError(
        name
          ? `${where} is the class ${name}, not an instance: did you mean new ${name}(${args})?`
          : `${where} is a class, not an instance: pass one made with \`new\``,
      );
    }
    throw adapterError(
      `${where} is ${describeType(value)}, not a ${contract}: pass what it returns${name ? `, e.g. ${name}(...)` : ''}`,
    );
  }
  if (typeof value !== 'object' || value === null) {
    throw adapterError(`${where} must be a ${contract} object, got ${describeType(value)}`);
  }
  if (typeof (value as { then?: unknown }).then === 'function') {
    throw adapterError(`${where} is a Promise, not a ${contract}: await it before passing it`);
  }
  const adapter = value as Record<string, unknown>;
  const missing = names.filter((name) => methods[name] && typeof adapter[name] !== 'function');
  if (missing.length > 0) {
    const list = missing.map((name) => `${name}()`).join(', ');
    throw adapterError(
      `${where} is not a ${contract}: ${describeType(value)} without ${missing.length === 1 ? 'the method' : 'the methods'} ${list}`,
    );
  }
  for (const name of names) {
    if (!methods[name] && adapter[name] !== undefined && typeof adapter[name] !== 'function') {
      throw adapterError(`${where}.${name} must be a method (or absent), got ${describeType(adapter[name])}`);
    }
  }
}

/**
 * Throws a TypeError unless `value` is an array of non-empty strings. A lone string is
 * refused on purpose: `'12345'.includes('123')` is true, so a string where a list belongs
 * would match every substring of it.
 */
export function assertStringList(where: string, value: unknown): asserts value is readonly string[] {
  if (!Array.isArray(value)) throw new OptionError(`${where} must be an array of strings, got ${describeType(value)}`);
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'string' || item === '') {
      throw new OptionError(`${where}[${i}] must be a non-empty string, got ${describeType(item)}`);
    }
  });
}

/** An adapter that cannot serve as one. */
function adapterError(message: string): OptionError {
  return new OptionError(message, 'INVALID_ADAPTER');
}

/**
 * Checks an optional adapter option of `createSmsRouter` named `name`: `undefined` (returned
 * as is) means the default, described by `fallback`; anything else must pass `check`.
 * `null` is refused rather than read as "the default": the defaults are an in-memory store
 * (lost on restart) and a fake carrier (nothing reaches a phone), and a `null` here is most
 * often a factory or a configuration lookup that failed. Falling back silently would run a
 * production gateway on them.
 */
export function optionalAdapter<T>(name: string, given: T | undefined, fallback: string, check: (where: string, value: unknown) => void): T | undefined {
  const where = `createSmsRouter: \`${name}\``;
  if (given === undefined) return undefined;
  if (given === null) {
    throw new OptionError(`${where} is null; leave it out to get the default (${fallback}), or pass one`, 'INVALID_ADAPTER');
  }
  check(where, given);
  return given;
}
