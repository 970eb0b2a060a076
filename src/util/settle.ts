/**
 * `settle`: continues with a value that may or may not be a promise, without a promise turn
 * when it is not. Plug-in contracts (key verifiers, rate-limit stores) allow both, and on
 * the request path a turn per stage per request is measurable.
 */

/** True for a promise or any other thenable. */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Calls `done` with `value` (at once when it is not a promise, else once it resolves), or
 * `fail` with what it rejected with. When `done` throws after a promise resolved, `fail`
 * gets that error too (at once, `done`'s throw reaches the caller, as in any middleware):
 * an error thrown in a promise callback would otherwise be an unhandled rejection.
 */
export function settle<T>(value: T | PromiseLike<T>, done: (value: T) => void, fail: (error: unknown) => void): void {
  if (!isPromiseLike(value)) {
    done(value);
    return;
  }
  Promise.resolve(value).then((resolved) => {
    try {
      done(resolved);
    } catch (error) {
      fail(error);
    }
  }, fail);
}
