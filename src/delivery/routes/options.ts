/**
 * The options of `RoutedDelivery` and their resolution into a route table: every name,
 * prefix, profile and fallback checked when the adapter is built, so a typo in a carrier
 * table fails at start-up rather than sending a country's traffic to the wrong carrier.
 */
import type { DeliveryAdapter, OutgoingPart } from '../contract.js';
import { assertKnownKeys, nearest } from '../../util/known-keys.js';
import { OptionError } from '../../errors.js';
import { readNumber } from '../../numbers/read-number.js';
import { isSupportedCountry } from 'libphonenumber-js/max';

/** One route: the carrier it reaches and the messages it takes. */
export interface RouteOptions {
  /** The carrier this route's messages go to (an `SmppDelivery`, say); one adapter per route. */
  delivery: DeliveryAdapter;
  /**
   * Recipient prefixes this route takes, digits as the recipient is written (`25470`). The
   * longest prefix of any route that matches wins. Default none.
   */
  prefixes?: readonly string[];
  /** Profile codes this route takes, whatever the recipient; checked before prefixes. Default none. */
  profiles?: readonly string[];
  /**
   * Recipient countries this route takes, ISO 3166 alpha-2 (`KE`), as the message record
   * keeps them (docs/numbers.md): checked after prefixes, so a prefix carves a network out
   * of its country. Default none.
   */
  countries?: readonly string[];
  /**
   * The route that takes this route's messages while it is down (every bind that submits
   * unbound, or throttled past `throttleLimit`). Default none: they wait for it.
   */
  fallback?: string;
}

/** What a `select` function answers: a route's name, or nothing to let the prefix and profile rules decide. */
export type RouteSelection = string | null | undefined;

/** Options of `RoutedDelivery`. */
export interface RoutedDeliveryOptions {
  /**
   * The routes, by name: a letter, then letters, digits, `_` or `-`, lower case, at most
   * 32 characters. The name qualifies the carrier ids the route reports (`name:id`).
   */
  routes: Record<string, RouteOptions>;
  /** The route of a message no rule matches. Default none: such a message ends `rejected`. */
  default?: string;
  /**
   * A host function that picks the route for a message (a number-portability lookup, say),
   * asked before the profile and prefix rules; `null`/`undefined` leaves the message to
   * them. Asked for the first part the router submits; it must answer the same for the same
   * message, since a retry on another instance asks again. A rejection is retried.
   */
  select?: (part: OutgoingPart) => RouteSelection | Promise<RouteSelection>;
  /**
   * Throttled refusals in a row (a retryable error with `retryAfterMs`, as SMPP's
   * ESME_RTHROTTLED) after which a route counts as down for that long. Default 3.
   */
  throttleLimit?: number;
}

/** A route resolved: its name and its chain of fallbacks. */
export interface ResolvedRoute {
  /** The route's name. */
  name: string;
  /** Its carrier. */
  delivery: DeliveryAdapter;
  /** The routes to try, in order: itself, its fallback, the fallback's fallback, ... */
  chain: readonly string[];
}

/** {@link RoutedDeliveryOptions} resolved. */
export interface RouteTable {
  /** Every route, by name, in the order given. */
  routes: ReadonlyMap<string, ResolvedRoute>;
  /** Route by profile code. */
  byProfile: ReadonlyMap<string, string>;
  /** Route by recipient prefix. */
  byPrefix: ReadonlyMap<string, string>;
  /** Route by recipient country. */
  byCountry: ReadonlyMap<string, string>;
  /** The longest prefix configured (0 when none). */
  longestPrefix: number;
  /** The default route, or `null`. */
  fallbackAll: string | null;
  /** The host's function, or `null`. */
  select: RoutedDeliveryOptions['select'] | null;
  /** Throttled refusals in a row that take a route down. */
  throttleLimit: number;
}

const ROUTE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const PREFIX = /^\d{1,15}$/;
const OPTION_NAMES = ['routes', 'default', 'select', 'throttleLimit'];
const ROUTE_OPTION_NAMES = ['delivery', 'prefixes', 'profiles', 'countries', 'fallback'];

/** Checks the options and builds the table; throws an `OptionError` naming the first mistake. */
export function resolveRoutes(options: RoutedDeliveryOptions): RouteTable {
  if (typeof options !== 'object' || options === null) throw new OptionError('RoutedDelivery needs options: { routes: { name: { delivery, prefixes } } }');
  assertKnownKeys('RoutedDelivery', options, OPTION_NAMES);
  const given = options.routes;
  if (typeof given !== 'object' || given === null || Object.keys(given).length === 0) {
    throw new OptionError('RoutedDelivery needs `routes`: { name: { delivery, prefixes?, profiles?, countries?, fallback? } }');
  }
  const names = Object.keys(given);
  const known = (what: string, name: unknown): string => {
    if (typeof name === 'string' && given[name] !== undefined) return name;
    const hint = typeof name === 'string' ? nearest(name, names) : undefined;
    throw new OptionError(`RoutedDelivery ${what} names no route: ${JSON.stringify(name)}${hint ? `; did you mean "${hint}"?` : ''}`);
  };
  const byProfile = new Map<string, string>();
  const byPrefix = new Map<string, string>();
  const byCountry = new Map<string, string>();
  const adapters = new Map<DeliveryAdapter, string>();
  for (const name of names) {
    const route = given[name]!;
    if (!ROUTE_NAME.test(name)) {
      throw new OptionError(`RoutedDelivery route name "${name}" must be a lower-case letter, then letters, digits, _ or -, at most 32 characters`);
    }
    if (typeof route !== 'object' || route === null) throw new OptionError(`RoutedDelivery route "${name}" must be an object`);
    assertKnownKeys(`RoutedDelivery route "${name}"`, route, ROUTE_OPTION_NAMES);
    const delivery = route.delivery as Partial<DeliveryAdapter> | undefined;
    if (!delivery || typeof delivery.start !== 'function' || typeof delivery.submit !== 'function' || typeof delivery.close !== 'function') {
      throw new OptionError(`RoutedDelivery route "${name}" needs \`delivery\`: an adapter with start, submit and close`, 'INVALID_ADAPTER');
    }
    const other = adapters.get(route.delivery);
    if (other !== undefined) {
      throw new OptionError(`RoutedDelivery routes "${other}" and "${name}" share one adapter; give one route both its prefixes and profiles`, 'INVALID_ADAPTER');
    }
    adapters.set(route.delivery, name);
    for (const prefix of list(name, 'prefixes', route.prefixes)) {
      if (!PREFIX.test(prefix)) throw new OptionError(`RoutedDelivery route "${name}": prefix "${prefix}" must be 1 to 15 digits`);
      const taken = byPrefix.get(prefix);
      if (taken !== undefined) throw new OptionError(`RoutedDelivery: prefix "${prefix}" is in routes "${taken}" and "${name}"`);
      byPrefix.set(prefix, name);
    }
    for (const profile of list(name, 'profiles', route.profiles)) {
      const taken = byProfile.get(profile);
      if (taken !== undefined) throw new OptionError(`RoutedDelivery: profile "${profile}" is in routes "${taken}" and "${name}"`);
      byProfile.set(profile, name);
    }
    for (const country of list(name, 'countries', route.countries)) {
      if (!isSupportedCountry(country)) throw new OptionError(`RoutedDelivery route "${name}": country "${country}" must be an ISO 3166 alpha-2 code in upper case, such as "KE"`);
      const taken = byCountry.get(country);
      if (taken !== undefined) throw new OptionError(`RoutedDelivery: country "${country}" is in routes "${taken}" and "${name}"`);
      byCountry.set(country, name);
    }
    if (route.fallback !== undefined) known(`route "${name}" fallback`, route.fallback);
  }
  const routes = new Map<string, ResolvedRoute>();
  for (const name of names) {
    const chain = [name];
    for (let next = given[name]!.fallback; next !== undefined; next = given[next]!.fallback) {
      if (chain.includes(next)) throw new OptionError(`RoutedDelivery: the fallbacks of route "${name}" go round in a circle (${[...chain, next].join(' -> ')})`);
      chain.push(next);
    }
    routes.set(name, { name, delivery: given[name]!.delivery, chain });
  }
  const throttleLimit = options.throttleLimit ?? 3;
  if (!Number.isInteger(throttleLimit) || throttleLimit < 1) {
    throw new OptionError(`RoutedDelivery option "throttleLimit" must be a positive integer, got ${String(throttleLimit)}`);
  }
  if (options.select !== undefined && typeof options.select !== 'function') {
    throw new OptionError('RoutedDelivery option "select" must be a function (part) => route name');
  }
  return {
    routes,
    byProfile,
    byPrefix,
    byCountry,
    longestPrefix: Math.max(0, ...[...byPrefix.keys()].map((prefix) => prefix.length)),
    fallbackAll: options.default === undefined ? null : known('option "default"', options.default),
    select: options.select ?? null,
    throttleLimit,
  };
}

function list(name: string, key: string, value: readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || item === '')) {
    throw new OptionError(`RoutedDelivery route "${name}": \`${key}\` must be an array of non-empty strings`);
  }
  return value;
}

/**
 * The route the rules give a part, or `null` when none does: its profile's route, else its
 * recipient's longest matching prefix, else its recipient's country, else the default route.
 */
export function ruleRoute(table: RouteTable, part: OutgoingPart): string | null {
  const byProfile = table.byProfile.get(part.profileCode);
  if (byProfile !== undefined) return byProfile;
  for (let length = Math.min(table.longestPrefix, part.recipient.length); length > 0; length--) {
    const route = table.byPrefix.get(part.recipient.slice(0, length));
    if (route !== undefined) return route;
  }
  if (table.byCountry.size > 0) {
    // A record that does not say (stored before countries were kept) is read from its number.
    const country = part.country === undefined ? readNumber(part.recipient, null).country : part.country;
    const route = country === null ? undefined : table.byCountry.get(country);
    if (route !== undefined) return route;
  }
  return table.fallbackAll;
}
