/**
 * The console's `/principals` view: each principal with its usage against its limits and
 * caps. The principals are the router's `staticKeys` table when it has one (every key's
 * owner, its scopes, expiry, limits and caps as configured); with another `verifyKey` the
 * router cannot list them, so the view lists the principals whose messages this process saw
 * accepted, with what storage knows of them (their balance) and no configuration.
 */
import { readExpiresAt } from '../auth/expiry.js';
import type { Principal } from '../auth/principal.js';
import type { SmsRouter } from '../router/create-router.js';
import type { AppliedLimit } from '../router/operator-view.js';
import { age, esc, table, td, time } from './html.js';
import type { ViewContext } from './views.js';

/** Rows shown at most, and principals remembered from events at most. */
export const PRINCIPALS_SHOWN = 200;

/** Remembers the principals whose messages the router accepted, for a `verifyKey` that cannot be listed. */
export class PrincipalsSeen {
  /** Ids, least recently seen first. */
  readonly #ids = new Set<string>();

  constructor(sms: SmsRouter) {
    sms.on('message.accepted', ({ message }) => {
      this.#ids.delete(message.principalId);
      this.#ids.add(message.principalId);
      if (this.#ids.size > PRINCIPALS_SHOWN) this.#ids.delete(this.#ids.values().next().value!);
    });
  }

  /** The ids seen, most recently seen first. */
  ids(): string[] {
    return [...this.#ids].reverse();
  }
}

/** `used / cap` of one spend-cap period, or why there is none to show. */
async function capCell(context: ViewContext, principal: Principal, cap: number | undefined, period: string, id: string): Promise<string> {
  if (cap === undefined) return td('no cap');
  const count = context.sms.storage.countedUnits;
  if (count === undefined) return td(`cap ${cap}, not counted by this storage`);
  const used = await count.call(context.sms.storage, principal.id, period);
  const full = used >= cap;
  return `<td class="${used * 5 >= cap * 4 ? 'bad' : ''}" id="${esc(id)}" data-used="${used}">${esc(`${used} / ${cap}`)}${full ? ' (reached)' : ''}</td>`;
}

/** `n per window`, or `off`. */
function limitText(limit: AppliedLimit | null): string {
  return limit === null ? 'off' : `${limit.limit} / ${age(limit.windowMs).replace(/ 0 s$/, '')}`;
}

/** One configured principal's row. */
async function configuredRow(context: ViewContext, principal: Principal, balance: number | null): Promise<string[]> {
  const periods = context.sms.operator.spendPeriods(context.now);
  const limits = context.sms.operator.limitsOf(principal);
  const expiresAt = principal.expiresAt === undefined ? null : readExpiresAt(principal.expiresAt);
  const expired = expiresAt !== null && expiresAt <= context.now;
  const id = principal.id;
  return [
    td(id, 'mono'),
    td(principal.disabled === true ? 'disabled' : expired ? 'expired' : 'active', principal.disabled === true || expired ? 'bad' : 'good'),
    td(principal.scopes === undefined ? 'all' : principal.scopes.join(', ') || 'read, cancel'),
    td(expiresAt === null ? 'never' : time(expiresAt)),
    `<td id="${esc(`balance-${id}`)}">${esc(balance ?? '-')}</td>`,
    await capCell(context, principal, principal.dailyUnits, periods.day, `today-${id}`),
    await capCell(context, principal, principal.monthlyUnits, periods.month, `month-${id}`),
    td(`${limitText(limits.requests)} requests, ${limitText(limits.messages)} messages`),
    td(principal.maxQueued ?? 'router default'),
  ];
}

/** `/principals`: each principal, its balance, its spend caps' use today and this month, its limits, scopes and expiry. */
export async function principals(context: ViewContext, seen: PrincipalsSeen): Promise<string> {
  const credit = context.sms.credit;
  const balanceOf = (id: string): Promise<number | null> => (credit === null ? Promise.resolve(null) : credit.balance(id));
  const configured = context.sms.operator.principals();
  if (configured === null) {
    const ids = seen.ids();
    const rows = await Promise.all(ids.map(async (id) => [td(id, 'mono'), `<td id="${esc(`balance-${id}`)}">${esc((await balanceOf(id)) ?? '-')}</td>`]));
    return `<section class="wide" id="principals"><h2>Principals</h2>${table(['principal', 'credit balance'], rows, 'No message accepted since this process started', 'principal-table')}
<p class="hint">The router's <code>verifyKey</code> is the host's own: it cannot list its principals, their scopes, limits or caps. Listed: those whose messages this process accepted since it started (the latest ${PRINCIPALS_SHOWN}).</p></section>`;
  }
  const shown = configured.slice(0, PRINCIPALS_SHOWN);
  const rows = await Promise.all(shown.map(async (principal) => configuredRow(context, principal, await balanceOf(principal.id))));
  const more = configured.length > shown.length ? ` The first ${PRINCIPALS_SHOWN} of ${configured.length} are shown.` : '';
  return `<section class="wide" id="principals"><h2>Principals</h2>${table(
    ['principal', 'state', 'scopes', 'expires', 'credit balance', 'today / dailyUnits', 'this month / monthlyUnits', 'rate limits', 'max queued'],
    rows,
    'The staticKeys table is empty',
    'principal-table',
  )}
<p class="hint">From the router's <code>staticKeys</code> table. Units are counted by the storage only for a principal with a cap, in the router's <code>spendCaps.timeZone</code>; a red count is at 80% of its cap or more.${more}</p></section>`;
}
