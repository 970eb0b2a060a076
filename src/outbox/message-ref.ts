/**
 * Message refs: UUIDs of version 7 (RFC 9562), a millisecond timestamp followed by random
 * bits, made by the `uuid` package.
 *
 * Why version 7: every storage indexes `ref` uniquely, and refs that grow with time land on
 * the index's last pages where random ones (version 4) would touch a page anywhere per
 * message. A ref still cannot be guessed (74 random bits), and a lookup by ref is scoped to
 * the caller's key anyway; what it shows is the accept time, which the caller already knows.
 */
import { v7 } from 'uuid';

/**
 * A new message ref: a lower-case UUID version 7 string, e.g.
 * `019abc12-3456-7def-8123-456789abcdef`. `now` (epoch ms) is the timestamp it starts with;
 * without it, the clock, and refs made one after another sort in that order.
 */
export function newMessageRef(now?: number): string {
  return now === undefined ? v7() : v7({ msecs: Math.floor(now) });
}
