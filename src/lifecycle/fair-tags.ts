/**
 * Virtual finish tags: the fair order of the queue as one number per message, so that a
 * claim is one indexed scan by (class, tag) however many principals have queued messages.
 * The bundled adapters' way of keeping the fair order of `Storage.claimMessages`, exported
 * for an adapter that wants the same; any order that keeps the contract's rules will do.
 *
 * Start-time fair queuing, per class: a request's messages get tags after the later of
 * - its principal's last queued tag (its own backlog: its messages stay in acceptance order),
 * - the head of the class's queue, the smallest tag a claim could take now (a principal
 *   that was idle starts its turn there rather than at a tag from before its idleness, which
 *   would put it ahead of everyone for as long as it was away),
 * spaced `1 / weight` apart. Two principals with backlogs then alternate, one of weight 2
 * having two messages claimed for the other's one; a principal that sends one message now
 * and then finds it claimed next, after at most one message of each other principal.
 */

/**
 * The tags of `count` messages a principal of `weight` stores now, given its last queued
 * tag in the class (`null`: none queued) and the class's `head`: the smallest tag a claim
 * could take now; when nothing is claimable (all leased or waiting for a retry), the
 * largest tag queued in the class, so new messages go after a retry that is not due yet;
 * `null` when the class has nothing queued.
 *
 * A newcomer's first tag equals the head's, and acceptance order puts it right after the
 * head: A's backlog then B's first message go A1, B1, A2, ... rather than A1, A2, B1.
 */
export function fairTags(count: number, weight: number, principalLast: number | null, head: number | null): number[] {
  const start = Math.max(principalLast ?? Number.NEGATIVE_INFINITY, head === null ? 0 : head - 1 / weight);
  const step = 1 / weight;
  const tags = new Array<number>(count);
  for (let i = 0; i < count; i++) tags[i] = start + (i + 1) * step;
  return tags;
}

/**
 * The rank a claim orders classes by: transactional first. An adapter that claims by
 * (rank, tag, insertion order) keeps every transactional message before any bulk one.
 */
export const PRIORITY_RANK = { transactional: 0, bulk: 1 } as const;
