/**
 * The options of `createSmsDashboard`, checked at construction: the console has no login of
 * its own, so it refuses to be built unless the host says who may see it (`auth`) or says
 * in so many words that everyone may (`allowUnauthenticated: true`).
 */
import type { Request } from 'express';
import { OptionError } from '../errors.js';

/** Decides whether a request may see the console and act on it: the host's own staff check. */
export type DashboardAuth = (req: Request) => boolean | Promise<boolean>;

/** What `createSmsDashboard` takes. */
export interface SmsDashboardOptions {
  /** Whether `req` may use the console; a `false` (or a rejection) answers 403. Required unless `allowUnauthenticated`. */
  auth?: DashboardAuth;
  /**
   * `true`: serve the console to whoever reaches the router, because the host already
   * guards its mount point (a middleware before it, a private network). Never the default.
   */
  allowUnauthenticated?: boolean;
  /** The console's title, in its header. Default `sms-outbox`. */
  title?: string;
}

/** The options after the checks. */
export interface DashboardConfig {
  auth: DashboardAuth | null;
  title: string;
}

const KNOWN = new Set(['auth', 'allowUnauthenticated', 'title']);

/**
 * Checks `options`.
 *
 * @throws OptionError `DASHBOARD_UNGUARDED` without `auth` or `allowUnauthenticated: true`;
 *   `UNKNOWN_OPTION` / `INVALID_OPTION` for a name or value that is wrong.
 */
export function resolveDashboardOptions(options: SmsDashboardOptions | undefined): DashboardConfig {
  if (options === undefined || options === null || typeof options !== 'object') {
    throw new OptionError(
      'createSmsDashboard: give { auth: (req) => boolean } (the host\'s staff check) or { allowUnauthenticated: true }',
      'DASHBOARD_UNGUARDED',
    );
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN.has(name)) throw new OptionError(`createSmsDashboard: unknown option ${name} (known: ${[...KNOWN].join(', ')})`, 'UNKNOWN_OPTION');
  }
  const { auth, allowUnauthenticated, title } = options;
  if (auth !== undefined && typeof auth !== 'function') throw new OptionError('createSmsDashboard: auth must be a function (req) => boolean | Promise<boolean>');
  if (allowUnauthenticated !== undefined && typeof allowUnauthenticated !== 'boolean') {
    throw new OptionError('createSmsDashboard: allowUnauthenticated must be a boolean');
  }
  if (auth === undefined && allowUnauthenticated !== true) {
    throw new OptionError(
      'createSmsDashboard: no auth hook; give { auth: (req) => boolean } (the host\'s staff check) or { allowUnauthenticated: true }',
      'DASHBOARD_UNGUARDED',
    );
  }
  if (title !== undefined && (typeof title !== 'string' || title === '' || title.length > 100)) {
    throw new OptionError('createSmsDashboard: title must be a string of 1 to 100 characters');
  }
  return { auth: auth ?? null, title: title ?? 'sms-outbox' };
}
