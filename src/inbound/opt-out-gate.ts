/**
 * The port through which the send endpoints honour opt-outs for quick-send profiles that ask
 * for it (`Profile.honourOptOuts`): a message to a number opted out of its sender is stored
 * with the rest of its request, answered as usual, and ended `rejected` (`opted_out`) at once
 * instead of being handed to the worker. (Premium messages are checked by the worker, right
 * before their first part goes out.)
 */
import type { InsertLease, NewMessage } from '../storage/contract.js';

/** What the send endpoints ask of the opt-out list. */
export interface OptOutGate {
  /** The refs of `messages` whose recipient opted out of their sender, or `null` when none did. */
  blocked(messages: readonly NewMessage[]): Promise<Set<string> | null>;
  /**
   * A short lease to store a request under when some of its messages are to be ended and the
   * worker had no room: no claim takes them before they are ended.
   */
  holdLease(now: number): InsertLease;
  /** Ends the stored messages `refs` `rejected` (`opted_out`), announcing each transition. */
  end(refs: ReadonlySet<string>): Promise<void>;
}
