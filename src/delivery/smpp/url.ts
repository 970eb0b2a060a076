/**
 * Reads an `smpp://system_id:password@host:port` URL (or `ssmpp://` for TLS) into
 * connection fields, so an SMSC account can be configured as one string (an environment
 * variable, a secret) and a malformed one fails when the adapter is built.
 */
import { OptionError } from '../../errors.js';

/** The fields an SMPP URL carries. */
export interface SmppUrlFields {
  /** Host name or address. */
  host: string;
  /** Port; 2775 for `smpp:`, 3550 for `ssmpp:` when the URL names none. */
  port: number;
  /** True for `ssmpp:`. */
  tls: boolean;
  /** The user part, percent-decoded; `undefined` when absent. */
  systemId: string | undefined;
  /** The password part, percent-decoded; `undefined` when absent. */
  password: string | undefined;
  /** The `system_type` query parameter, when present. */
  systemType: string | undefined;
}

/**
 * Parses an SMPP URL. Throws a `TypeError` naming the problem for anything else (wrong
 * scheme, no host, a path), so a typo fails at construction rather than at connect time.
 */
export function parseSmppUrl(url: string): SmppUrlFields {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OptionError(`Invalid SMPP url "${redact(url)}": expected smpp://system_id:password@host:port`);
  }
  const tls = parsed.protocol === 'ssmpp:';
  if (parsed.protocol !== 'smpp:' && !tls) {
    throw new OptionError(`Invalid SMPP url scheme "${parsed.protocol}": expected smpp: or ssmpp:`);
  }
  // Non-special schemes keep IPv6 brackets in `hostname`; net.connect wants them off.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new OptionError(`Invalid SMPP url "${redact(url)}": no host`);
  if (parsed.pathname !== '' && parsed.pathname !== '/') {
    throw new OptionError(`Invalid SMPP url "${redact(url)}": unexpected path "${parsed.pathname}"`);
  }
  return {
    host,
    port: parsed.port ? Number(parsed.port) : tls ? 3550 : 2775,
    tls,
    systemId: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    systemType: parsed.searchParams.get('system_type') ?? undefined,
  };
}

/** The URL with its password hidden, for error messages. */
function redact(url: string): string {
  return url.replace(/(\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}
