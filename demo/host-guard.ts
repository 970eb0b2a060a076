/**
 * The demo answers only requests addressed to one of its own names. A page on another site
 * can make its name resolve to 127.0.0.1 (DNS rebinding) and then read the demo as its own
 * origin: the dashboard, which carries the API key, the messages, the search and metrics.
 * Such a request still names the other site in its Host header, and is refused here.
 */
import { hostname, networkInterfaces } from 'node:os';
import type { RequestHandler } from 'express';
import { refuse } from './errors.js';

/** This machine's loopback names: the names of a demo that listens on loopback (the default). */
const LOOPBACK = ['localhost', '127.0.0.1', '::1'];

/** A Host header's name: without its port and IPv6 brackets, in lower case, without a final dot. */
export function hostName(header: string): string {
  const name = header.startsWith('[') ? header.slice(1, header.indexOf(']')) : header.replace(/:\d*$/, '');
  return name.toLowerCase().replace(/\.$/, '');
}

/**
 * The names a demo listening on `listenHost` answers to: the loopback names, and the one it
 * was given (`HOST`); on every interface (`0.0.0.0`, `::`), this machine's name and
 * addresses; and `extra` (SMS_ALLOWED_HOSTS), for a name only the reader's network knows.
 */
export function allowedHostNames(listenHost: string, extra: readonly string[] = []): Set<string> {
  const names = new Set([...LOOPBACK, ...extra.map(hostName)]);
  const given = hostName(listenHost.includes(':') && !listenHost.startsWith('[') ? `[${listenHost}]` : listenHost);
  if (given === '0.0.0.0' || given === '::') {
    names.add(hostName(hostname()));
    for (const info of Object.values(networkInterfaces()).flat()) if (info !== undefined) names.add(info.address.toLowerCase());
  } else {
    names.add(given);
  }
  return names;
}

/** Refuses (403 `HOST_NOT_ALLOWED`) a request whose Host header is none of `allowed`. */
export function hostGuard(allowed: ReadonlySet<string>): RequestHandler {
  return (req, res, next) => {
    const header = req.headers.host;
    if (header !== undefined && allowed.has(hostName(header))) {
      next();
      return;
    }
    refuse(res, 'HOST_NOT_ALLOWED', 'Host must name this demo (localhost, or the address it listens on); SMS_ALLOWED_HOSTS adds names');
  };
}
