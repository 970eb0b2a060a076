/**
 * Opt-out decisions for the messages that go out. A quick-send profile that asks for it
 * (`Profile.honourOptOuts`) has the send endpoints ask {@link OptOutGate}: a message to a
 * number opted out of its sender is stored with the rest of its request, answered as usual,
 * and ended `rejected` (`opted_out`) at once instead of being handed to the worker. A premium
 * message is checked by the worker ({@link premiumOptOutCheck}), right before its first part
 * goes out.
 */
import { outcome } from '../lifecycle/states.js';
import type { InsertLease, MessageRecord, NewMessage, Storage, Transition } from '../storage/contract.js';

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

/** What the gate needs. */
export interface OptOutGateDeps {
  /** The router's storage. */
  storage: Storage;
  /** The lease owner id of this instance. */
  owner: string;
  /** The clock, epoch ms. */
  now: () => number;
  /** Where the transitions of the messages it ends go. */
  onTransition: (transition: Transition) => void;
}

/** How long a request's messages are held while its opted-out ones are ended, when the worker had no room (ms). */
const HOLD_MS = 5_000;

const OPTED_OUT = outcome('rejected', 'opted_out');

/** The gate over the storage's opt-out list; `null` when the storage keeps none (it has no inbound methods). */
export function optOutGate(deps: OptOutGateDeps): OptOutGate | null {
  const { storage, owner, now, onTransition } = deps;
  if (storage.insertInbound === undefined) return null;
  const list = storage as Required<Storage>;
  return {
    blocked: async (messages) => {
      const found = await list.findOptOuts(messages.map((m) => ({ shortCode: m.sender, number: m.recipient })));
      const refs = new Set<string>();
      for (const [i, optedOut] of found.entries()) if (optedOut) refs.add(messages[i]!.ref);
      return refs.size === 0 ? null : refs;
    },
    holdLease: (at) => ({ owner: `${owner}:opt-out`, until: at + HOLD_MS }),
    end: async (refs) => {
      for (const ref of refs) {
        const transition = await storage.finish(ref, OPTED_OUT, now());
        if (transition !== null) onTransition(transition);
      }
    },
  };
}

/**
 * For the submit worker: whether a premium message's recipient opted out of its sender;
 * `undefined` when the storage keeps no opt-out list (it has no inbound methods).
 */
export function premiumOptOutCheck(storage: Storage): ((message: MessageRecord) => Promise<boolean>) | undefined {
  if (storage.insertInbound === undefined) return undefined;
  const list = storage as Required<Storage>;
  return async (message) => (await list.findOptOuts([{ shortCode: message.sender, number: message.recipient }]))[0] === true;
}
