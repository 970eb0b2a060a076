/**
 * Two host processes on one PostgreSQL schema, as two instances behind a load balancer:
 * the carrier gets every part once (counted at the carrier side of both), every message
 * ends, and when one instance is killed with SIGKILL the other finishes what it held.
 * Skips with a printed reason when PostgreSQL is unreachable, unless
 * SMS_OUTBOX_REQUIRE_SERVICES=1.
 */
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizeCarrierId } from '../../src/delivery/carrier-ids.js';
import { TERMINAL_STATES } from '../../src/lifecycle/states.js';
import { eventually } from '../helpers/poll.js';
import { forEachLimited, lookup, quickBody, send, type AckedMessage } from './client.js';
import { startHost, type HostConfig, type HostProcess, type SubmitLine } from './host-process.js';
import { dropSchema, freshSchema, hostStatementsSettled, makePool, postgresUnavailable } from './postgres-service.js';
import { PACKED } from '../helpers/packed-row.js';

const unavailable = await postgresUnavailable('PostgreSQL two-instance e2e test');
const admin = unavailable === null ? makePool(2) : null;
const schemas: string[] = [];

afterAll(async () => {
  if (admin === null) return;
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

const TERMINAL_SQL = TERMINAL_STATES.map((state) => `'${state}'`).join(', ');

/** A message's state in the store's table, in the row's packed document. */
const STATE_SQL = `(data::jsonb ->> ${PACKED.state})`;

/** Accepts every part at submit (some throttled first), ends each in a receipt of any kind. */
const SIMULATOR: HostConfig['simulator'] = {
  outcomes: { delivered: 85, absent_subscriber: 4, expired: 3, rejected: 3, throttled: 5 },
  latencyMs: [5, 100],
};

/** One-part texts: the volume here is messages, and the crash tests cover multipart. */
const TEXTS = ['Hello from instance test', 'Your code is 4711'];

/** Sends `requests` requests of 100 messages, alternating between `hosts`, 8 at once. */
async function sendAll(hosts: readonly HostProcess[], requests: number, tag: string): Promise<AckedMessage[]> {
  const acked: AckedMessage[] = [];
  const indexes = Array.from({ length: requests }, (_, i) => i);
  await forEachLimited(indexes, 8, async (i) => {
    const externalId = `${tag}-${i}`;
    acked.push(...(await send(hosts[i % hosts.length]!.base, quickBody(100, externalId, null, TEXTS), externalId, false)));
  });
  return acked;
}

/** How many messages of `schema` are not yet terminal, leaving out `except`. */
async function countOpen(pool: pg.Pool, schema: string, except: readonly string[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${schema}".ledger_messages WHERE ${STATE_SQL} NOT IN (${TERMINAL_SQL}) AND NOT (ref = ANY($1))`,
    [except],
  );
  return rows[0]!.n;
}

/**
 * The messages {@link countOpen} counts, grouped by what a worker would look at (state,
 * lease, due time, timer) and by whose carrier id the first part has: one the victim printed
 * (`victimIds`), another, or none; with a few refs.
 */
async function openBreakdown(pool: pg.Pool, schema: string, except: readonly string[], victimIds: readonly string[]): Promise<string> {
  const { rows } = await pool.query(
    `SELECT ${STATE_SQL} AS state, lease_owner, (lease_until > $2) AS leased, (due_at > $2) AS later, timer,
       CASE WHEN (data::jsonb -> ${PACKED.parts} -> 0 ->> 0) IS NULL THEN 'none'
            WHEN (data::jsonb -> ${PACKED.parts} -> 0 ->> 0) = ANY($3) THEN 'victim' ELSE 'other' END AS carrier_id,
       count(*)::int AS n, (array_agg(ref))[1:3] AS refs
     FROM "${schema}".ledger_messages WHERE ${STATE_SQL} NOT IN (${TERMINAL_SQL}) AND NOT (ref = ANY($1))
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY n DESC LIMIT 10`,
    [except, Date.now(), victimIds],
  );
  return JSON.stringify(rows);
}

/** Submissions per part (`ref#index`), per host. */
function countParts(submits: readonly SubmitLine[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { ref, index } of submits) counts.set(`${ref}#${index}`, (counts.get(`${ref}#${index}`) ?? 0) + 1);
  return counts;
}

function partsOf(acked: readonly AckedMessage[]): string[] {
  return acked.flatMap((m) => Array.from({ length: m.smsCount }, (_, i) => `${m.ref}#${i}`));
}

(unavailable === null ? describe : describe.skip)('two instances on one PostgreSQL schema', () => {
  it('submit 10,000 messages sent to both exactly once each and end every one', { timeout: 120_000 }, async () => {
    const schema = freshSchema('e2e_two');
    schemas.push(schema);
    // A lease far longer than any submission here: what is under test is that two live
    // instances never claim the same message, not what happens when a lease runs out.
    const config = (instanceId: string): HostConfig => ({
      storage: { kind: 'postgres', schema },
      instanceId,
      simulator: SIMULATOR,
      worker: { leaseMs: 30_000, concurrency: 64 },
    });
    const hosts = await Promise.all([startHost(config('a')), startHost(config('b'))]);
    try {
      const started = Date.now();
      const acked = await sendAll(hosts, 100, 'two');
      expect(acked).toHaveLength(10_000);
      const sentSec = (Date.now() - started) / 1000;
      // The pace depends on the machine; what must not happen is that the work stops.
      let lastOpen = 10_000;
      let progressAt = Date.now();
      await eventually(
        async () => {
          const open = await countOpen(admin!, schema);
          if (open < lastOpen) [lastOpen, progressAt] = [open, Date.now()];
          if (Date.now() - progressAt > 20_000) throw new Error(`no message ended for 20 s; ${open} not terminal`);
          return open;
        },
        { until: (open) => open === 0, timeoutMs: 95_000, intervalMs: 250, what: 'the count of messages not terminal to reach 0' },
      );
      const endedSec = (Date.now() - started) / 1000;

      const [a, b] = [countParts(hosts[0]!.submits), countParts(hosts[1]!.submits)];
      const wanted = partsOf(acked);
      const wrong: string[] = [];
      for (const part of wanted) {
        const times = (a.get(part) ?? 0) + (b.get(part) ?? 0);
        if (times !== 1) wrong.push(`${part} submitted ${times} times`);
      }
      expect(wrong.slice(0, 20), `${wrong.length} parts not submitted exactly once`).toEqual([]);
      expect(hosts[0]!.submits.length + hosts[1]!.submits.length).toBe(wanted.length);
      // Both instances took work: claims were shared, not won by one.
      expect(hosts[0]!.submits.length).toBeGreaterThan(0);
      expect(hosts[1]!.submits.length).toBeGreaterThan(0);
      for (const host of hosts) expect(host.errors, host.stderr()).toEqual([]);

      // Either instance answers for messages the other accepted.
      for (const i of [0, 1, 50, 99]) {
        const items = await lookup(hosts[(i + 1) % 2]!.base, `two-${i}`);
        expect(items).toHaveLength(100);
        for (const item of items) expect(TERMINAL_STATES).toContain(item.status);
      }
      console.log(
        `[two instances] 10,000 messages (${wanted.length} parts): sent in ${sentSec.toFixed(1)} s, all terminal after ` +
          `${endedSec.toFixed(1)} s; carrier accepted ${hosts[0]!.submits.length} parts from a, ${hosts[1]!.submits.length} from b, no part twice`,
      );
    } finally {
      await Promise.all(hosts.map((host) => host.stop()));
    }
  });

  it('one instance killed with SIGKILL mid-run: the other finishes the work it held', { timeout: 100_000 }, async () => {
    const schema = freshSchema('e2e_kill');
    schemas.push(schema);
    // A carrier slower than the accepting: the work outlasts the sending, so the victim dies
    // mid-run holding leases (at 64 submissions at once of 1-10 ms each, the two could drain
    // the 2,000 messages about as fast as they were sent, and the victim die holding none).
    const config = (instanceId: string): HostConfig => ({
      storage: { kind: 'postgres', schema },
      instanceId,
      simulator: { ...SIMULATOR, submitLatencyMs: [10, 30] },
      worker: { leaseMs: 2_000, concurrency: 8 },
    });
    const [survivor, victim] = await Promise.all([startHost(config('survivor')), startHost(config('victim'))]);
    try {
      const started = Date.now();
      const acked = await sendAll([survivor, victim], 20, 'kill');
      expect(acked).toHaveLength(2_000);
      // Mid-run: the victim is busy submitting, with a backlog still queued.
      const from = victim.submits.length;
      await eventually(() => victim.submits.length - from, {
        until: (parts) => parts >= 100,
        timeoutMs: 20_000,
        intervalMs: 250,
        what: 'the victim to submit 100 parts',
      });
      await victim.kill();
      const killedAt = Date.now();

      // What the victim held when it died: leased queued messages, and parts the carrier
      // accepted from it whose receipts died with it (those messages stay `submitted`).
      const held = await admin!.query<{ ref: string }>(
        `SELECT ref FROM "${schema}".ledger_messages WHERE ${STATE_SQL} = 'queued' AND lease_owner = 'victim' AND lease_until > $1`,
        [killedAt],
      );
      const leased = new Set(held.rows.map((row) => row.ref));
      // PostgreSQL still runs, and commits, the statements the victim sent before it died (its
      // last submissions among them): the parts it left without receipts are read once those
      // are done. Its leases are read before, while they last: once one runs out the survivor
      // takes the message over.
      await hostStatementsSettled('victim');
      const victimIds = victim.submits.map((s) => normalizeCarrierId(s.carrierId));
      const strandedRows = await admin!.query<{ ref: string }>(
        // A part is its carrier id alone (with its two times: 3 elements) until its receipt (stored-parts.ts).
        `SELECT DISTINCT m.ref FROM "${schema}".ledger_messages m CROSS JOIN jsonb_array_elements(m.data::jsonb -> ${PACKED.parts}) p
         WHERE ${STATE_SQL} NOT IN (${TERMINAL_SQL}) AND jsonb_array_length(p) IN (1, 3) AND p ->> 0 = ANY($1)`,
        [victimIds],
      );
      const stranded = new Set(strandedRows.rows.map((row) => row.ref));
      expect(leased.size, 'the victim held no lease when it was killed').toBeGreaterThan(0);

      await eventually(() => countOpen(admin!, schema, [...stranded]), {
        until: (open) => open === 0,
        timeoutMs: 45_000,
        intervalMs: 250,
        what: 'the count of messages not terminal, stranded ones aside, to reach 0',
      }).catch(async (error: unknown) => {
        throw new Error(`${String(error)}\nwhere they are: ${await openBreakdown(admin!, schema, [...stranded], victim.submits.map((line) => normalizeCarrierId(line.carrierId)))}\nsurvivor: ${survivor.stderr()}`);
      });

      const s = countParts(survivor.submits);
      const v = countParts(victim.submits);
      const problems: string[] = [];
      const stored = await admin!.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".ledger_messages`);
      expect(stored.rows[0]!.n).toBe(2_000);
      for (const ref of leased) {
        if (!stranded.has(ref) && ![...s.keys()].some((part) => part.startsWith(`${ref}#`))) {
          problems.push(`${ref}: leased by the victim, never submitted by the survivor`);
        }
      }
      // A part sent twice is allowed (submission is at-least-once) and counted: because the
      // victim died holding it, or because a 2 s lease ran out under load while its live
      // owner was still at work (the worker does not renew leases).
      let acrossKill = 0;
      const leaseRanOut = { both: 0, survivorTwice: 0, victimTwice: 0 };
      for (const part of partsOf(acked)) {
        const [bySurvivor, byVictim] = [s.get(part) ?? 0, v.get(part) ?? 0];
        if (bySurvivor + byVictim === 0) problems.push(`${part}: never submitted`);
        if (bySurvivor + byVictim < 2) continue;
        if (leased.has(part.split('#')[0]!)) acrossKill += bySurvivor + byVictim - 1;
        else if (bySurvivor > 1) leaseRanOut.survivorTwice++;
        else if (byVictim > 1) leaseRanOut.victimTwice++;
        else leaseRanOut.both++;
      }
      expect(problems.slice(0, 20), `${problems.length} problems`).toEqual([]);
      expect(survivor.errors, survivor.stderr()).toEqual([]);
      console.log(
        `[two instances, one killed] 2,000 messages; victim killed after ${victim.submits.length} parts, holding ` +
          `${leased.size} leased messages; ${stranded.size} stranded (receipt lost with the victim, still submitted); ` +
          `carrier got ${acrossKill} repeat submissions of held work; parts sent twice after a lease ran out: ` +
          `${leaseRanOut.both} by both, ${leaseRanOut.survivorTwice} by the survivor alone, ${leaseRanOut.victimTwice} by the victim alone; ` +
          `all others terminal after ` +
          `${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    } finally {
      await Promise.all([survivor.stop(), victim.kill()]);
    }
  });
});
