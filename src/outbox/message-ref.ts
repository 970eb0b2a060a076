/**
 * Message refs: UUIDs of version 7 (RFC 9562), a millisecond timestamp followed by 74
 * random bits, instead of version 4's 122 random bits.
 *
 * Why: every storage indexes `ref` uniquely. Random refs land all over that index, so each
 * commit of a SQL storage rewrites one index page per message; refs that grow with time land
 * on the last pages. Measured on SQLite with 100 messages per request: about a third more
 * messages per second. A ref still cannot be guessed (74 random bits per millisecond), and
 * a lookup by ref is scoped to the caller's key anyway; what it adds is the accept time to
 * the millisecond, which the caller already knows.
 */
import { randomFillSync } from 'node:crypto';

const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Random bytes are drawn in blocks, as `crypto.randomUUID` does: one draw per 1,000 refs. */
const RANDOM_PER_REF = 10;
const pool = Buffer.alloc(RANDOM_PER_REF * 1000);
let used = pool.length;

/**
 * A new message ref: a lower-case UUID version 7 string, e.g.
 * `019abc12-3456-7def-8123-456789abcdef`. `now` (epoch ms, default the clock) is the
 * timestamp it starts with; refs made later sort after refs made earlier in another
 * millisecond, in no particular order within one.
 */
export function newMessageRef(now: number = Date.now()): string {
  if (used + RANDOM_PER_REF > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const r = used;
  used += RANDOM_PER_REF;
  const time = Math.max(0, Math.min(Math.floor(now), 0xffff_ffff_ffff)).toString(16).padStart(12, '0');
  return (
    `${time.slice(0, 8)}-${time.slice(8)}-7${(pool[r]! & 0x0f).toString(16)}${HEX[pool[r + 1]!]}-` +
    `${HEX[(pool[r + 2]! & 0x3f) | 0x80]}${HEX[pool[r + 3]!]}-` +
    `${HEX[pool[r + 4]!]}${HEX[pool[r + 5]!]}${HEX[pool[r + 6]!]}${HEX[pool[r + 7]!]}${HEX[pool[r + 8]!]}${HEX[pool[r + 9]!]}`
  );
}
