/**
 * How the MO flow reads what the carrier wrote: addresses compared without spaces or a
 * leading `+`, a NUL made a character every storage keeps, and the key that tells a
 * carrier's redelivery of a message from a new one.
 */
import { createHash } from 'node:crypto';

/** A number or address as the carrier wrote it, without spaces or a leading `+`. */
export function plainAddress(address: string): string {
  return address.trim().replace(/^\+/, '');
}

/**
 * `text` with each NUL (U+0000) replaced by U+FFFD, the character that stands for one that
 * cannot be shown: no GSM-7 text has a NUL, PostgreSQL's text cannot hold one, and every
 * storage must keep the same message the same way.
 */
export function withoutNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/** The key the redelivery check compares: sender, recipient and text (plain addresses). */
export function inboundOnceKey(from: string, to: string, text: string): string {
  return createHash('sha256').update(`${from}\n${to}\n${text}`).digest('hex');
}
