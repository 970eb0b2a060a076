/**
 * The rules of the fair claim order (`Storage.claimMessages`), checked claim by claim against
 * a model of what is claimable: the contract suite's fairness cases store, claim, give back and
 * submit messages through a {@link FairOrderCheck}, which fails with the rule a claim broke.
 * The rules are properties, not one algorithm's sequence: any order that keeps them passes.
 *
 * 1. Only claimable messages: `queued`, due (`nextAttemptAt <= now`; a new message is due at its
 *    `createdAt`) and not under a live lease; each at most once per claim.
 * 2. As many as asked: a claim takes `min(limit, claimable)`.
 * 3. Transactional before bulk: no bulk message while a transactional one is claimable.
 * 4. Acceptance order within a principal (and class): the claimed message is the principal's
 *    earliest accepted claimable one. A message given back for a retry keeps its place: once
 *    due it goes before its principal's later messages.
 * 5. Turns: while principal B has a claimable message and is not served, another principal A
 *    of the same class is served at most once if their weights are equal, else
 *    `ceil(wA / wB) + 1` times (turns of unequal length do not line up). So
 *    one principal's backlog delays another's next message by at most a turn, and a principal
 *    that was idle gains no credit for its idle time.
 * 6. Weights within a bound: while A and B both have claimable messages, the turns each had
 *    (messages served divided by weight) never differ by more than {@link TURN_BOUND}.
 *
 * A message claimed again after its lease ended, or after a retry, or one stored leased (its
 * owner had it at once), was served already: its claim counts as its principal's turn for
 * rule 5 (it resets what the principal waited through) but not as a message served.
 *
 * @module
 */
import assert from 'node:assert/strict';
import type { InsertLease, MessageRecord, NewMessage, Priority } from '../../storage/contract.js';

/** How far apart, in turns (messages served / weight), two waiting principals may drift (rule 6). */
export const TURN_BOUND = 2;

/** One message as the model knows it. */
interface Modelled {
  name: string;
  message: NewMessage;
  /** Acceptance order: the order of the `insertMessages` calls, then the array's. */
  seq: number;
  queued: boolean;
  dueAt: number;
  leaseUntil: number | null;
  /** Claimed or leased before: a claim of it again is not a new message served. */
  served: boolean;
}

/** Per class, per principal: what it waited through and what it was served. */
interface Turns {
  /** waitedThrough.get(B).get(A): messages of A served while B waited unserved (rule 5). */
  waitedThrough: Map<string, Map<string, number>>;
  /** together.get(`A\nB`), A before B: messages of A and of B served since both started waiting (rule 6). */
  together: Map<string, { a: number; b: number }>;
}

/**
 * The model of one fairness case's queue: record each step the case takes on the storage,
 * and give it each claim's result to check against the rules (see the module comment).
 */
export class FairOrderCheck {
  private readonly byRef = new Map<string, Modelled>();
  private readonly byName = new Map<string, Modelled>();
  private readonly counts = new Map<string, number>();
  private readonly weights = new Map<string, number>();
  private readonly turns: Record<Priority, Turns> = { transactional: emptyTurns(), bulk: emptyTurns() };
  private seq = 0;

  /** Names `messages` (one request, in order) `<prefix><n>` and records them stored, leased under `lease` if given. */
  stored(messages: readonly NewMessage[], prefix: string, lease?: InsertLease): void {
    for (const message of messages) {
      const number = (this.counts.get(prefix) ?? 0) + 1;
      this.counts.set(prefix, number);
      const modelled: Modelled = {
        name: `${prefix}${number}`,
        message,
        seq: this.seq++,
        queued: true,
        dueAt: message.createdAt,
        leaseUntil: lease?.until ?? null,
        served: lease !== undefined,
      };
      this.byRef.set(message.ref, modelled);
      this.byName.set(modelled.name, modelled);
      this.weights.set(message.principalId, message.weight);
    }
  }

  /** The message named `name`. */
  message(name: string): NewMessage {
    const found = this.byName.get(name);
    assert.ok(found, `the case names no message ${name}`);
    return found.message;
  }

  /** The names of `records`, in order. */
  names(records: readonly { ref: string }[]): string[] {
    return records.map((record) => this.byRef.get(record.ref)?.name ?? `unknown ${record.ref}`);
  }

  /** Records `name` given back for a retry due at `nextAttemptAt` (its lease ended). */
  rescheduled(name: string, nextAttemptAt: number): void {
    const modelled = this.byName.get(name)!;
    modelled.dueAt = nextAttemptAt;
    modelled.leaseUntil = null;
  }

  /** Records `name` submitted: it left the queue. */
  submitted(name: string): void {
    this.byName.get(name)!.queued = false;
  }

  /**
   * Checks one claim's result (`claimed`, in the order returned) made at `now` for up to
   * `limit` under a lease of `leaseMs`, and records the messages leased. Returns their names.
   */
  claimed(claimed: readonly MessageRecord[], limit: number, now: number, leaseMs: number): string[] {
    const names = this.names(claimed);
    const claimable = [...this.byRef.values()].filter((m) => isClaimable(m, now));
    const remaining = new Set(claimable);
    const said = `claim of up to ${limit} at now=${now} returned [${names.join(', ')}]`;
    this.forgetIdle(remaining);
    for (const [i, record] of claimed.entries()) {
      const m = this.byRef.get(record.ref);
      assert.ok(m, `${said}: ${record.ref} is no message stored in this case`);
      assert.ok(remaining.has(m), `${said}: ${m.name} was not claimable (rule: only queued, due, unleased messages, each once)`);
      const priority = m.message.priority;
      if (priority === 'bulk') {
        const waiting = [...remaining].find((other) => other.message.priority === 'transactional');
        assert.ok(waiting === undefined, `${said}: bulk ${m.name} was claimed while transactional ${waiting?.name} was claimable (rule: every claimable transactional message before any bulk one)`);
      }
      const earlier = [...remaining].find((other) => other.message.principalId === m.message.principalId && other.message.priority === priority && other.seq < m.seq);
      assert.ok(
        earlier === undefined,
        `${said}: ${m.name} was claimed before ${earlier?.name}, accepted earlier by the same principal and claimable (rule: a principal's messages go in acceptance order; a retry keeps its place)`,
      );
      this.serve(m, remaining, said, i);
      remaining.delete(m);
      m.leaseUntil = now + leaseMs;
      m.served = true;
      this.forgetIdle(remaining);
    }
    assert.equal(
      claimed.length,
      Math.min(limit, claimable.length),
      `${said}: ${claimable.length} messages were claimable (${claimable.map((m) => m.name).join(', ')}), so it must take ${Math.min(limit, claimable.length)} (rule: a claim takes as many as it may)`,
    );
    return names;
  }

  /** Rules 5 and 6 for `m` served while `remaining` are claimable. */
  private serve(m: Modelled, remaining: ReadonlySet<Modelled>, said: string, position: number): void {
    const priority = m.message.priority;
    const turns = this.turns[priority];
    const a = m.message.principalId;
    const waiting = waitingPrincipals(remaining, priority);
    const isNew = !m.served;
    // A was served: what it waited through starts again.
    turns.waitedThrough.delete(a);
    if (!isNew) return;
    const wA = this.weights.get(a) ?? 1;
    for (const b of waiting) {
      if (b === a) continue;
      const wB = this.weights.get(b) ?? 1;
      const through = turns.waitedThrough.get(b) ?? new Map<string, number>();
      turns.waitedThrough.set(b, through);
      const times = (through.get(a) ?? 0) + 1;
      through.set(a, times);
      const allowed = allowedWhileWaiting(wA, wB);
      assert.ok(
        times <= allowed,
        `${said}: at position ${position}, ${m.name} is principal ${a}'s message number ${times} served while principal ${b} (weight ${wB}) waited with a claimable message, unserved; ${a} has weight ${wA}, so at most ${allowed} (rule: principals with claimable messages take turns, weight messages each)`,
      );
    }
    for (const b of waiting) {
      if (b === a) continue;
      const key = a < b ? `${a}\n${b}` : `${b}\n${a}`;
      const pair = turns.together.get(key) ?? { a: 0, b: 0 };
      turns.together.set(key, pair);
      if (a < b) pair.a++;
      else pair.b++;
      const [first, second] = a < b ? [a, b] : [b, a];
      const drift = pair.a / (this.weights.get(first) ?? 1) - pair.b / (this.weights.get(second) ?? 1);
      assert.ok(
        Math.abs(drift) <= TURN_BOUND,
        `${said}: since ${first} (weight ${this.weights.get(first)}) and ${second} (weight ${this.weights.get(second)}) both had claimable messages, they were served ${pair.a} and ${pair.b}: ${Math.abs(drift)} turns apart, more than ${TURN_BOUND} (rule: weights are honoured, within ${TURN_BOUND} turns)`,
      );
    }
  }

  /** Forgets what principals with nothing claimable waited through, and the pairs they were in. */
  private forgetIdle(remaining: ReadonlySet<Modelled>): void {
    for (const priority of ['transactional', 'bulk'] as const) {
      const waiting = waitingPrincipals(remaining, priority);
      const turns = this.turns[priority];
      for (const b of turns.waitedThrough.keys()) if (!waiting.has(b)) turns.waitedThrough.delete(b);
      for (const key of turns.together.keys()) {
        const [x, y] = key.split('\n') as [string, string];
        if (!waiting.has(x) || !waiting.has(y)) turns.together.delete(key);
      }
    }
  }
}

/**
 * How many messages of a principal of weight `wA` may be served while one of weight `wB` waits
 * unserved (rule 5): one for equal weights; for unequal ones, `ceil(wA / wB)` and one more, as
 * turns of unequal length do not line up.
 */
export function allowedWhileWaiting(wA: number, wB: number): number {
  return wA === wB ? 1 : Math.ceil(wA / wB) + 1;
}

function emptyTurns(): Turns {
  return { waitedThrough: new Map(), together: new Map() };
}

function isClaimable(m: Modelled, now: number): boolean {
  return m.queued && m.dueAt <= now && (m.leaseUntil === null || m.leaseUntil <= now);
}

/** The principals with a message of `priority` in `remaining`. */
function waitingPrincipals(remaining: ReadonlySet<Modelled>, priority: Priority): Set<string> {
  const principals = new Set<string>();
  for (const m of remaining) if (m.message.priority === priority) principals.add(m.message.principalId);
  return principals;
}
