/**
 * Carrier-id spellings (docs/lifecycle.md#receipts): SMPP carriers write the same message
 * id in hex in one place (`submit_sm_resp`) and in decimal in another (the receipt's `id:`
 * field), with or without leading zeros, in either letter case. Storage keeps one canonical spelling;
 * a receipt is matched by trying each spelling it could stand for.
 *
 * A routed id (`RoutedDelivery`) is qualified with the name of the route that carried it,
 * `route:id`, since two carriers may issue the same id: the qualifier is kept as it is
 * (lower-cased) and the id after it is spelled as any other.
 */

/** Ids longer than this are not converted between bases: no carrier writes such numbers. */
const MAX_CONVERTIBLE_LENGTH = 64;

/** A route qualifier: a route name (letter first, at most 32 characters) and a colon. */
const QUALIFIER = /^[a-z][a-z0-9_-]{0,31}:/;

/** The `route:` qualifier of a lower-cased id (`''` when it has none), and the id after it. */
function splitQualifier(lower: string): [string, string] {
  // An id from a single carrier has no colon: no pattern to run on every ack and receipt.
  if (!lower.includes(':')) return ['', lower];
  const match = QUALIFIER.exec(lower);
  return match ? [match[0], lower.slice(match[0].length)] : ['', lower];
}

/**
 * A carrier id qualified with the route that carried it: what `RoutedDelivery` reports for
 * its children's acks and receipts, so two carriers' equal ids stay apart in storage.
 */
export function qualifyCarrierId(route: string, id: string): string {
  return `${route}:${id.trim()}`;
}

/**
 * The canonical spelling of a carrier id: trimmed, lower-cased, leading zeros stripped
 * (an id of only zeros becomes `"0"`).
 *
 * Storage stores `normalizeCarrierId(ack.carrierId)`; compare receipts through
 * {@link carrierIdSpellings}, never by this alone.
 */
export function normalizeCarrierId(id: string): string {
  const [qualifier, lower] = splitQualifier(id.trim().toLowerCase());
  return qualifier + stripZeros(lower);
}

function stripZeros(lower: string): string {
  let start = 0;
  while (start < lower.length - 1 && lower.charCodeAt(start) === 0x30) start++;
  return start === 0 ? lower : lower.slice(start);
}

/**
 * Every canonical spelling a receipt's carrier id may stand for, most likely first: the
 * id itself (normalized); then, if it is all decimal digits, the same number in hex; then,
 * if it is all hex digits, the same number in decimal. No duplicates.
 *
 * A receipt is matched by trying these in order against stored (normalized) ids. Numbers
 * of any size convert exactly (BigInt); ids that are not numbers (a UUID, say) have only
 * themselves as spelling. A `route:` qualifier is kept on every spelling.
 */
export function carrierIdSpellings(id: string): string[] {
  const [qualifier, lower] = splitQualifier(id.trim().toLowerCase());
  return bareSpellings(stripZeros(lower)).map((spelling) => qualifier + spelling);
}

function bareSpellings(normalized: string): string[] {
  const spellings = [normalized];
  if (normalized.length === 0 || normalized.length > MAX_CONVERTIBLE_LENGTH) return spellings;
  let decimal = true;
  let hex = true;
  for (let i = 0; i < normalized.length; i++) {
    const c = normalized.charCodeAt(i);
    const digit = c >= 0x30 && c <= 0x39;
    decimal &&= digit;
    hex &&= digit || (c >= 0x61 && c <= 0x66);
  }
  const add = (spelling: string) => {
    if (!spellings.includes(spelling)) spellings.push(spelling);
  };
  if (decimal) add(BigInt(normalized).toString(16));
  if (hex) add(BigInt(`0x${normalized}`).toString(10));
  return spellings;
}
