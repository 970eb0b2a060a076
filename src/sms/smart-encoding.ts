/**
 * Smart encoding: the characters that have a look-alike in the GSM 7-bit alphabet (curly
 * quotes, dashes, the ellipsis, the many Unicode spaces, full-width punctuation), and the
 * text as it goes out once they are replaced. One such character, typed on a phone or pasted
 * from a word processor, makes a whole text UCS-2: 70 characters an SMS instead of 160.
 *
 * The table follows the list bulk-SMS providers publish for the feature (Twilio's "Smart
 * Encoding"), written as `\u` escapes so the source stays ASCII. Every replacement is
 * GSM-7 text (the tests check it against the alphabet).
 *
 * @module
 */
import { GSM_COST } from './gsm-tables.js';

/** `[replacement, characters]` rows: each character of the string is replaced by the first. */
const ROWS: readonly (readonly [string, string])[] = [
  // Double quotes: guillemets, curly and reversed, modifier letters, ornaments, CJK, full-width.
  ['"', '\u00AB\u00BB\u201C\u201D\u201E\u201F\u02BA\u02EE\u2033\u2036\u275D\u275E\u301D\u301E\u301F\uFF02'],
  // Single quotes and apostrophes: curly, modifier letters, accents, primes, ornaments, full-width.
  ["'", '\u2018\u2019\u201A\u201B\u02B9\u02BB\u02BC\u02BD\u02C8\u02CA\u02CB\u0060\u00B4\u2032\u2035\u275B\u275C\uFF07'],
  // Hyphens and dashes: soft hyphen, hyphen, non-breaking hyphen, figure/en/em dash, bar, minus.
  ['-', '\u00AD\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\uFE58\uFE63\uFF0D'],
  // Spaces: no-break, en/em quads and spaces, thin, hair, narrow no-break, math, ideographic.
  [' ', '\u00A0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u202F\u205F\u3000'],
  // Invisible characters: zero-width space and joiners, word joiner, byte-order mark.
  ['', '\u200B\u200C\u200D\u2060\uFEFF'],
  ['...', '\u2026'],
  [',', '\uFE50\uFF0C\u3001'],
  ['.', '\uFE52\uFF0E\u3002'],
  [':', '\u2236\uFE55\uFF1A'],
  [';', '\uFE54\uFF1B'],
  ['!', '\u01C3\uFE57\uFF01'],
  ['?', '\uFE56\uFF1F'],
  ['/', '\u2044\u2215\uFF0F'],
  ['*', '\u204E\u2217\uFF0A'],
  ['<', '\u2039\uFE64\uFF1C'],
  ['>', '\u203A\uFE65\uFF1E'],
  ['(', '\uFE59\uFF08'],
  [')', '\uFE5A\uFF09'],
  ['#', '\uFE5F\uFF03'],
  ['%', '\uFE6A\uFF05'],
  ['&', '\uFE60\uFF06'],
  ['+', '\uFE62\uFF0B'],
  ['=', '\uFE66\uFF1D'],
  ['@', '\uFE6B\uFF20'],
  ['$', '\uFE69\uFF04'],
  ['_', '\uFF3F'],
  ['^', '\u02C6\u2038\uFF3E'],
  ['~', '\u02DC\uFF5E'],
  ['\\', '\uFE68\uFF3C'],
  ['[', '\uFF3B'],
  [']', '\uFF3D'],
  ['{', '\uFF5B'],
  ['}', '\uFF5D'],
  ['|', '\uFF5C'],
];

/** Each replaced character (a UTF-16 code unit) and what it becomes. Exported for the tests. */
export const SMART_REPLACEMENTS: ReadonlyMap<number, string> = (() => {
  const map = new Map<number, string>();
  for (const [replacement, characters] of ROWS) {
    for (let i = 0; i < characters.length; i++) map.set(characters.charCodeAt(i), replacement);
  }
  return map;
})();

/**
 * `text` with every character from index `from` on that is outside the GSM alphabet replaced
 * by its look-alike, or `null` when one of them has none (the text stays UCS-2 whatever is
 * replaced). The characters before `from` must be GSM-7 already.
 */
export function replaceFrom(text: string, from: number): string | null {
  let out = text.slice(0, from);
  let start = from;
  for (let i = from; i < text.length; i++) {
    if (GSM_COST[text.charCodeAt(i)] !== 0) continue;
    const replacement = SMART_REPLACEMENTS.get(text.charCodeAt(i));
    if (replacement === undefined) return null;
    out += text.slice(start, i) + replacement;
    start = i + 1;
  }
  return out + text.slice(start);
}
