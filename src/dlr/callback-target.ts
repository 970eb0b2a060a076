/**
 * A callback URL's parts, parsed once per URL: a customer's one callback URL comes back with
 * every report, and both the sender's host lanes and the POST need its parts.
 */
import { rememberRecent } from '../util/remember-recent.js';

/** The parts of a callback URL the report sender uses. */
export interface CallbackTarget {
  /** `scheme://host[:port]`, where the POST goes. */
  origin: string;
  /** The host name, which groups reports into one lane (see `dispatcher.ts`). */
  hostname: string;
  /** Path and query, as the POST sends them. */
  path: string;
}

/** `url`'s parts, remembered for recent URLs; `null` for a URL that does not parse. */
export const callbackTarget = rememberRecent((url: string): CallbackTarget | null => {
  try {
    const parsed = new URL(url);
    return { origin: parsed.origin, hostname: parsed.hostname, path: `${parsed.pathname}${parsed.search}` };
  } catch {
    return null;
  }
}, 1024);
