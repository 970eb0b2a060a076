/**
 * `SMS_PROFILES`: the profiles the demo key owns, so that a real client runs against the
 * demo unchanged, with its own profile code and sender.
 *
 * Syntax: profiles separated by commas, each a code, optionally followed by `:` and its
 * senders separated by `|`, the first being the default: `12345:ACME,22021501`,
 * `777:BANK|BANKALERTS`. A profile without senders sends from its code. Unset or empty: the
 * demo's own two, `12345` and `22021501`.
 */

/** One profile of `SMS_PROFILES`. */
export interface DemoProfile {
  /** The `profile_code` clients send. */
  code: string;
  /** Its senders, the default first; absent: the code. */
  senders?: string[];
}

/** The demo's profiles when `SMS_PROFILES` says none. */
export const DEFAULT_DEMO_PROFILES: readonly DemoProfile[] = [{ code: '12345' }, { code: '22021501' }];

/** A profile code: what clients put in `profile_code`, without spaces or the syntax's separators. */
const CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * A sender: a number (a short code or long number, up to 15 digits) or an alphanumeric id of
 * up to 11 characters, the longest an SMS originator address carries.
 */
const SENDER = /^(?:\d{1,15}|[A-Za-z0-9 ._-]{1,11})$/;

/**
 * The profiles `SMS_PROFILES` gives (see the module comment), or the defaults when it is
 * unset or empty.
 *
 * @throws Error with a message naming the entry at fault and the syntax, for a malformed value.
 */
export function parseSmsProfiles(value: string | undefined): DemoProfile[] {
  if (value === undefined || value.trim() === '') return DEFAULT_DEMO_PROFILES.map((profile) => ({ ...profile }));
  const syntax = 'expected profiles separated by commas, each a code with optional senders: `12345:ACME,22021501` or `777:BANK|ALERTS`';
  const seen = new Set<string>();
  return value.split(',').map((entry, index) => {
    const where = `entry ${index + 1} (${JSON.stringify(entry.trim())})`;
    const [rawCode, rawSenders, ...extra] = entry.split(':');
    const code = rawCode!.trim();
    if (extra.length > 0) throw new Error(`${where} has more than one ':'; ${syntax}`);
    if (code === '') throw new Error(`${where} has no profile code; ${syntax}`);
    if (!CODE.test(code)) throw new Error(`${where}: the code may hold letters, digits, '.', '_' and '-' only (at most 64); ${syntax}`);
    if (seen.has(code)) throw new Error(`${where}: profile ${code} is listed twice`);
    seen.add(code);
    if (rawSenders === undefined) return { code };
    const senders = rawSenders.split('|').map((sender) => sender.trim());
    for (const sender of senders) {
      if (sender === '') throw new Error(`${where} has an empty sender; leave out ':' to send from the code; ${syntax}`);
      if (!SENDER.test(sender)) {
        throw new Error(`${where}: sender ${JSON.stringify(sender)} is neither up to 15 digits nor up to 11 letters, digits, spaces, '.', '_' or '-'`);
      }
    }
    return { code, senders };
  });
}

/** The profiles as the start-up line prints them: `12345 (from ACME), 22021501`. */
export function describeProfiles(profiles: readonly DemoProfile[]): string {
  return profiles.map(({ code, senders }) => (senders === undefined ? code : `${code} (from ${senders.join(', ')})`)).join(', ');
}
