/**
 * Loading an optional peer dependency (better-sqlite3 for `sms-outbox/sqlite`) with an
 * error that says what to install.
 *
 * Why not a plain `import Database from 'better-sqlite3'`: in an ES module a static import
 * is resolved before any code of the importing graph runs, so a missing package fails with
 * Node's raw `ERR_MODULE_NOT_FOUND` and no chance to explain. A synchronous `require`
 * (the adapters' constructors are synchronous, and better-sqlite3 is CommonJS) can be
 * caught. It resolves from this file's own location, as a static import would, so it finds
 * the package wherever the host installed it for sms-outbox. (The CommonJS build gets
 * `import.meta.url` from tsup's shims.)
 */
import { createRequire } from 'node:module';

/** True when `error` says that `name` itself (not something it loads) was not found. */
function isMissing(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    (message.includes(`'${name}'`) || message.includes(`"${name}"`))
  );
}

/**
 * Requires the optional peer `name` for the entry `entry` (`sms-outbox/sqlite`). When it is
 * not installed, throws an Error saying `<entry> needs the \`<name>\` package: npm install
 * <name>` (with the original error as its `cause`, and its `code`); any other failure
 * (a native build that does not load, say) is thrown as it is.
 */
export function requirePeer<T>(name: string, entry: string): T {
  try {
    return createRequire(import.meta.url)(name) as T;
  } catch (error) {
    if (!isMissing(error, name)) throw error;
    const friendly = new Error(`${entry} needs the \`${name}\` package: npm install ${name}`, { cause: error });
    // Kept so that code checking for a missing module still recognises it.
    (friendly as { code?: unknown }).code = (error as { code?: unknown }).code;
    throw friendly;
  }
}
