/**
 * The queue of parts waiting for a slot at the carrier, in the claim's fair order: every
 * waiting transactional part before any bulk one, and within a class the principals in
 * turn, each principal's parts in the order they came. The worker holds messages claimed
 * ahead of the carrier; were they served first come first served, a one-time password
 * claimed now would wait behind every campaign message held before it.
 */
import { PRIORITY_RANK } from '../lifecycle/fair-tags.js';
import type { Priority } from '../storage/contract.js';

/** One class's waiting parts: a queue per principal, and the principals' turn order. */
class Turns {
  readonly #byPrincipal = new Map<string, (() => void)[]>();
  /** Principals with waiting parts, the next to be served first. */
  #order: string[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(principalId: string, wake: () => void): void {
    let queue = this.#byPrincipal.get(principalId);
    if (queue === undefined) {
      this.#byPrincipal.set(principalId, (queue = []));
      this.#order.push(principalId);
    }
    queue.push(wake);
    this.#size++;
  }

  /** The next principal's first waiting part; that principal goes to the end of the turn. */
  shift(): (() => void) | undefined {
    const principalId = this.#order.shift();
    if (principalId === undefined) return undefined;
    const queue = this.#byPrincipal.get(principalId)!;
    const wake = queue.shift()!;
    if (queue.length === 0) this.#byPrincipal.delete(principalId);
    else this.#order.push(principalId);
    this.#size--;
    return wake;
  }
}

/** Parts waiting for a carrier slot, taken in fair order. */
export class FairSlotQueue {
  readonly #classes: Turns[] = [new Turns(), new Turns()];

  /** Queues the wake-up of a part of `principalId`'s message of class `priority`. */
  push(priority: Priority, principalId: string, wake: () => void): void {
    this.#classes[PRIORITY_RANK[priority]]!.push(principalId, wake);
  }

  /** The wake-up of the part to serve next, or `undefined` when none waits. */
  shift(): (() => void) | undefined {
    for (const turns of this.#classes) if (turns.size > 0) return turns.shift();
    return undefined;
  }
}
