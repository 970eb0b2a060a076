/**
 * The time-aware fields of a message: when it may go (`sendAt`) and until when it is worth
 * sending (`validUntil`). The rules on them are the library's (lifecycle/timing.ts).
 *
 * @module
 */

/** When a message may go, and until when it is worth sending; both optional. */
export interface TimedFields {
  /**
   * When the message is due, epoch ms, if later than its acceptance: it is stored
   * `scheduled` and queued (in fair order, tagged then) once due. `null` or absent: at once.
   */
  sendAt?: number | null;
  /**
   * Until when the message may be submitted, epoch ms: once this passes before its first
   * part is submitted, it is never submitted and ends `expired` (`validity_period_elapsed`).
   * `null` or absent: no limit.
   */
  validUntil?: number | null;
}
