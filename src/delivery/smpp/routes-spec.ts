/**
 * Carrier routes written as one string, for an environment variable or a secret:
 * `25470,25471=smpp://a:pw@host:2775;25473=smpp://b:pw@host:2776;*=smpp://c:pw@host:2777`.
 * Each entry is prefixes (or `*`, the default route) `=` an SMPP url; it builds one
 * `SmppDelivery` per entry and a `RoutedDelivery` over them. Checked when it is called, so
 * a malformed table fails at start-up.
 */
import { OptionError } from '../../errors.js';
import { RoutedDelivery } from '../routes/routed-delivery.js';
import type { RouteOptions } from '../routes/options.js';
import { SmppDelivery } from './adapter.js';
import type { SmppDeliveryOptions } from './options.js';
import { parseSmppUrl } from './url.js';

/** Options of {@link smppRoutes}. */
export interface SmppRoutesOptions {
  /** Options every route's `SmppDelivery` gets besides its url (`tps`, `binds`, ...). Default none. */
  smpp?: Omit<SmppDeliveryOptions, 'url'>;
  /** Whether each prefix route falls back to the `*` route while it is down. Default false. */
  fallbackToDefault?: boolean;
}

const ROUTE_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * Builds a `RoutedDelivery` from a routes string (see the module notes). Routes are named
 * after the url's system_id, lower-cased, where that is a valid and unused route name, else
 * `route1`, `route2`, ... in the order given. Throws an `OptionError` naming a bad entry.
 */
export function smppRoutes(spec: string, options: SmppRoutesOptions = {}): RoutedDelivery {
  const entries = spec
    .split(';')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new OptionError('SMPP routes: no entry; expected prefixes=smpp://user:pass@host:port;...');
  const routes: Record<string, RouteOptions & { prefixes: string[] }> = {};
  let fallbackAll: string | undefined;
  entries.forEach((entry, i) => {
    const at = entry.indexOf('=');
    if (at <= 0) throw new OptionError(`SMPP routes: entry ${i + 1} has no "prefixes=url" form`);
    const prefixes = entry
      .slice(0, at)
      .split(',')
      .map((prefix) => prefix.trim());
    const url = entry.slice(at + 1).trim();
    const systemId = parseSmppUrl(url).systemId?.toLowerCase() ?? '';
    const name = ROUTE_NAME.test(systemId) && routes[systemId] === undefined ? systemId : `route${i + 1}`;
    if (routes[name] !== undefined) throw new OptionError(`SMPP routes: entry ${i + 1} would be named "${name}", which entry names already`);
    const isDefault = prefixes.includes('*');
    if (isDefault) {
      if (prefixes.length > 1) throw new OptionError(`SMPP routes: entry ${i + 1} mixes "*" with prefixes`);
      if (fallbackAll !== undefined) throw new OptionError('SMPP routes: "*" is given twice');
      fallbackAll = name;
    }
    routes[name] = { delivery: new SmppDelivery({ ...options.smpp, url }), prefixes: isDefault ? [] : prefixes };
  });
  if (options.fallbackToDefault && fallbackAll !== undefined) {
    for (const [name, route] of Object.entries(routes)) if (name !== fallbackAll) route.fallback = fallbackAll;
  }
  return new RoutedDelivery({ routes, ...(fallbackAll === undefined ? {} : { default: fallbackAll }) });
}
