/**
 * SMS segment counting and splitting (docs/endpoints.md#sms_count), by GSM 03.38: how many
 * SMS units a text needs, in which encoding, and which slice of it goes in each part.
 *
 * `countSms` runs on every message of every request, so it is table-driven, allocates
 * nothing but its result, and reads the text once. The runs of plain ASCII one-septet
 * characters between the characters that need a look (most texts have none) are skipped by
 * a regular expression, which V8 compiles to native code that scans a one-byte string far
 * faster than a `charCodeAt` loop. UCS-2 texts stop at their first non-GSM character and
 * look only at the units around each part boundary.
 */
import { GSM_COST } from './gsm-tables.js';
import { replaceFrom } from './smart-encoding.js';

/** Septets in a single GSM-7 SMS. */
const GSM_SINGLE = 160;
/** Septets per part of a concatenated GSM-7 SMS (the UDH takes the other 7). */
const GSM_PART = 153;
/** UTF-16 code units in a single UCS-2 SMS. */
const UCS2_SINGLE = 70;
/** UTF-16 code units per part of a concatenated UCS-2 SMS. */
const UCS2_PART = 67;

/** How many SMS units a text needs, and why. */
export interface SmsCount {
  /** Number of SMS parts (the billed `sms_count`); at least 1. */
  smsCount: number;
  /** The encoding the text must go out in. */
  encoding: 'GSM-7' | 'UCS-2';
  /** Septets for GSM-7 (extension characters count 2), UTF-16 code units for UCS-2. */
  units: number;
}

/** Options of {@link countSms}. */
export interface CountOptions {
  /**
   * Count the text as smart encoding sends it ({@link smartEncode}): with its characters
   * that have a GSM-7 look-alike replaced, when that makes it GSM-7 at no more units.
   * Default false.
   */
  smartEncoding?: boolean;
}

/**
 * Counts the SMS units `text` needs, by GSM 03.38.
 *
 * GSM-7 when every character is in the basic or extension table (extension characters cost
 * two septets): up to 160 septets is one SMS, longer texts are packed into parts of 153
 * septets without letting an extension character straddle two parts. Any other character
 * makes the whole text UCS-2: up to 70 UTF-16 code units is one SMS, longer texts are
 * packed into parts of 67 without splitting a surrogate pair.
 *
 * Never throws: the empty text counts 1 and a lone surrogate counts as one UCS-2 unit
 * (request validation rejects both before a message is stored). With
 * `{ smartEncoding: true }`, counts the text {@link smartEncode} gives, at the same speed
 * for a GSM-7 text (the replacement only starts at the first character outside the alphabet).
 */
export function countSms(text: string, options?: CountOptions): SmsCount {
  const n = text.length;
  startPacking();
  let extensions = 0;
  const needsLook = NEEDS_LOOK;
  needsLook.lastIndex = 0;
  while (needsLook.test(text)) {
    const at = needsLook.lastIndex - 1;
    const cost = GSM_COST[text.charCodeAt(at)]!;
    if (cost === 1) continue;
    if (cost === 0) return options?.smartEncoding === true ? smartCount(text, at) : ucs2Count(text, n);
    packExtension(at);
    extensions++;
  }
  return gsmCount(n, extensions);
}

/**
 * The text smart encoding sends for `text`: every character with a GSM-7 look-alike replaced
 * (smart-encoding.ts), when then the whole text is GSM-7 and needs no more SMS units than
 * `text` as it is; otherwise `text` unchanged. So a text keeps its characters when one of
 * them has no look-alike (an emoji, Cyrillic), and never costs more for being replaced (70
 * ellipses are one UCS-2 SMS, but 210 septets as dots).
 */
export function smartEncode(text: string): string {
  const needsLook = NEEDS_LOOK;
  needsLook.lastIndex = 0;
  while (needsLook.test(text)) {
    const at = needsLook.lastIndex - 1;
    if (GSM_COST[text.charCodeAt(at)] !== 0) continue;
    const replaced = replaceFrom(text, at);
    if (replaced === null) return text;
    return countSms(replaced).smsCount <= countUcs2Parts(text, text.length) ? replaced : text;
  }
  return text;
}

/** {@link countSms} with smart encoding of a text whose first character outside the alphabet is at `at`. */
function smartCount(text: string, at: number): SmsCount {
  const replaced = replaceFrom(text, at);
  const ucs2 = ucs2Count(text, text.length);
  if (replaced === null) return ucs2;
  const gsm = countSms(replaced);
  return gsm.smsCount <= ucs2.smsCount ? gsm : ucs2;
}

/**
 * Splits `text` into the texts of its SMS parts: exactly `countSms(text).smsCount` of them,
 * by the same packing rule, so joining them gives `text` back.
 *
 * A text that fits one SMS (the empty text included) is returned as a single part. Each
 * GSM-7 part holds at most 153 septets and each UCS-2 part at most 67 code units; a part
 * never ends between the two halves of a surrogate pair.
 */
export function splitSms(text: string): string[] {
  const count = countSms(text);
  if (count.smsCount === 1) return [text];
  const n = text.length;
  const parts: string[] = [];
  let start = 0;
  if (count.encoding === 'UCS-2') {
    while (n - start > UCS2_PART) {
      const end = ucs2PartEnd(text, start);
      parts.push(text.slice(start, end));
      start = end;
    }
  } else {
    let used = 0;
    for (let i = 0; i < n; i++) {
      const cost = GSM_COST[text.charCodeAt(i)]!;
      if (used + cost > GSM_PART) {
        parts.push(text.slice(start, i));
        start = i;
        used = 0;
      }
      used += cost;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** The count of a GSM-7 text of `n` characters, `extensions` of them two-septet ones. */
function gsmCount(n: number, extensions: number): SmsCount {
  const septets = n + extensions;
  if (septets <= GSM_SINGLE) return { smsCount: 1, encoding: 'GSM-7', units: septets };
  packOnes(n);
  return { smsCount: packParts, encoding: 'GSM-7', units: septets };
}

/** The count of a UCS-2 text of `n` code units. */
function ucs2Count(text: string, n: number): SmsCount {
  return { smsCount: countUcs2Parts(text, n), encoding: 'UCS-2', units: n };
}

// Greedy GSM-7 packing, kept in module state so that counting allocates nothing. Runs of
// one-septet characters are packed in O(1) each; only extension characters, which must not
// straddle a part boundary, are packed one by one. `packEnd` is the index of the first
// character not yet packed, `packUsed` the septets in the current part.
let packParts = 1;
let packUsed = 0;
let packEnd = 0;

function startPacking(): void {
  packParts = 1;
  packUsed = 0;
  packEnd = 0;
}

/** Packs the one-septet characters from `packEnd` up to (not including) `end`. */
function packOnes(end: number): void {
  const run = end - packEnd;
  if (run <= 0) return;
  const total = packUsed + run - 1;
  packParts += Math.floor(total / GSM_PART);
  packUsed = (total % GSM_PART) + 1;
  packEnd = end;
}

/** Packs the characters before index `at`, then the extension character at `at`. */
function packExtension(at: number): void {
  packOnes(at);
  if (packUsed + 2 > GSM_PART) {
    packParts++;
    packUsed = 2;
  } else {
    packUsed += 2;
  }
  packEnd = at + 1;
}

/**
 * Matches any character that is not a one-septet ASCII character: extension characters,
 * the non-ASCII characters of the basic table (e-acute, Delta, pound...) and everything
 * outside the alphabet. Built from {@link GSM_COST}, so it cannot disagree with the table.
 * Global, so `test` resumes at `lastIndex`; `countSms` sets it to 0 before each text, which
 * is safe because counting is synchronous.
 */
const NEEDS_LOOK: RegExp = (() => {
  let plain = '';
  for (let code = 0; code < 0x80; code++) if (GSM_COST[code] === 1) plain += `\\x${code.toString(16).padStart(2, '0')}`;
  return new RegExp(`[^${plain}]`, 'g');
})();

/** Parts of a UCS-2 text; only each part's last unit needs looking at, not the whole text. */
function countUcs2Parts(text: string, n: number): number {
  if (n <= UCS2_SINGLE) return 1;
  let parts = 1;
  let start = 0;
  while (n - start > UCS2_PART) {
    start = ucs2PartEnd(text, start);
    parts++;
  }
  return parts;
}

/**
 * End (exclusive) of the UCS-2 part that begins at `start`: 67 units on, or 66 when the
 * 67th is the high half of a surrogate pair whose low half would fall in the next part.
 */
function ucs2PartEnd(text: string, start: number): number {
  const end = start + UCS2_PART;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) {
    const next = text.charCodeAt(end);
    if (next >= 0xdc00 && next <= 0xdfff) return end - 1;
  }
  return end;
}
