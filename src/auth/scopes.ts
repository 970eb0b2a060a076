/**
 * Key scopes: the names a principal's `scopes` may list, what each one grants, and the
 * check of one grant. The two names of 0.1.0, `quick` and `premium`, stay as aliases that
 * grant what such a key could do then.
 */
import type { Permission } from '../endpoints.js';

export type { Permission } from '../endpoints.js';

/**
 * The names of 0.1.0: `quick` grants `send:quick`, `premium` grants `send:premium`, and
 * either grants `read`, `cancel` and `preview` too (every valid key could read and cancel
 * its own messages then).
 */
export type ScopeAlias = 'quick' | 'premium';

/** A name a principal's `scopes` may list: a {@link Permission} or a {@link ScopeAlias}. */
export type Scope = Permission | ScopeAlias;

/** Every permission, in the order the docs list them. */
export const PERMISSIONS: readonly Permission[] = ['send:quick', 'send:premium', 'read', 'cancel', 'preview', 'callbacks'];

/** Every name `scopes` may list. */
export const SCOPES: readonly Scope[] = [...PERMISSIONS, 'quick', 'premium'];

/** One bit per permission: a key's grants are one number, checked with a mask per request. */
const BIT: Readonly<Record<Permission, number>> = { 'send:quick': 1, 'send:premium': 2, read: 4, cancel: 8, preview: 16, callbacks: 32 };

/** What a key that may only read and cancel had in 0.1.0 (`scopes: []`), and what the aliases add to their send. */
const READ_AND_CANCEL = BIT.read | BIT.cancel;

const GRANTS: Readonly<Record<Scope, number>> = {
  ...BIT,
  quick: BIT['send:quick'] | READ_AND_CANCEL | BIT.preview,
  premium: BIT['send:premium'] | READ_AND_CANCEL | BIT.preview,
};

/** Every permission: a principal without `scopes`. */
export const ALL_GRANTS = Object.values(BIT).reduce((all, bit) => all | bit, 0);

/**
 * The permissions `scopes` grants, as a bit set for {@link grants}: each name's grant, its
 * aliases expanded; no list grants everything. An empty list keeps its 0.1.0 meaning, a key
 * that may read and cancel but not send. A name that is not a scope grants nothing, and so
 * does a `scopes` that is not a list (a `staticKeys` table refuses both at construction).
 */
export function grantsOf(scopes: unknown): number {
  if (scopes === undefined) return ALL_GRANTS;
  if (!Array.isArray(scopes)) return 0;
  if (scopes.length === 0) return READ_AND_CANCEL;
  let granted = 0;
  for (const name of scopes as unknown[]) {
    if (typeof name === 'string' && Object.hasOwn(GRANTS, name)) granted |= GRANTS[name as Scope];
  }
  return granted;
}

/** True when the bit set `granted` (from {@link grantsOf}) includes `permission`. */
export function grants(granted: number, permission: Permission): boolean {
  return (granted & BIT[permission]) !== 0;
}

/** The permission a scope name stands for when asked about one: an alias is asked as its send. */
export function permissionOf(scope: Scope): Permission {
  return scope === 'quick' ? 'send:quick' : scope === 'premium' ? 'send:premium' : scope;
}
