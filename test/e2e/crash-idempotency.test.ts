/**
 * Safe retries across kill -9: clients send every request with an `Idempotency-Key` and
 * retry it, same key and same body, on any error (the host killed mid-request, refused
 * connections until a new host is up on the same storage) until it is answered 200. Then
 * every key's messages are stored exactly once, and every key's answer names them: a request
 * whose commit raced the kill is replayed, not sent again. On SQLite, and on PostgreSQL when
 * it is reachable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/contract.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { SqliteStorage } from '../../src/storage/sqlite/adapter.js';
import { quickBody } from './client.js';
import { HOST_KEY, HOST_PRINCIPAL, startHost, type HostProcess, type HostStorage } from './host-process.js';
import { hostStatementsSettled, makePool, postgresUnavailable, schemasOfThisFile } from './postgres-service.js';

const dir = mkdtempSync(join(tmpdir(), 'sms-outbox-e2e-idem-'));
const pgUnavailable = await postgresUnavailable('PostgreSQL idempotency crash test');
const newSchema = schemasOfThisFile(pgUnavailable);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One request a client sent, retried until it was answered 200. */
interface KeyedRequest {
  key: string;
  messages: number;
  /** The 200 answer's body. */
  answer: string;
  /** Attempts that failed before it (network errors, other statuses). */
  failedAttempts: number;
  /** Whether the 200 was a replay. */
  replayed: boolean;
}

/** What one storage under the test needs. */
interface Target {
  storage: HostStorage;
  open(): Promise<{ storage: Storage; close(): Promise<void> }>;
  settle?(instanceId: string): Promise<void>;
}

/**
 * The clients: `clients` of them, each sending its requests one after another, each retried
 * with its key and body until answered 200. A failed attempt waits for `host()`, which the
 * test replaces with a pending promise before a kill and resolves with the new host's base.
 */
function keyedClients(clients: number, host: () => Promise<string>) {
  const done: KeyedRequest[] = [];
  const statuses: number[] = [];
  let stopped = false;
  let acked = 0;
  const onAcked: ((total: number) => void)[] = [];
  const client = async (id: number) => {
    for (let n = 0; !stopped; n++) {
      const key = `c${id}-${n}`;
      const messages = 1 + ((id + n) % 5);
      const body = quickBody(messages, key, null);
      let failedAttempts = 0;
      for (;;) {
        const base = await host();
        try {
          const res = await fetch(`${base}/create`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': HOST_KEY, 'idempotency-key': key },
            body,
          });
          const text = await res.text();
          if (res.status === 200) {
            done.push({ key, messages, answer: text, failedAttempts, replayed: res.headers.get('idempotent-replayed') === 'true' });
            acked += messages;
            for (const listener of onAcked) listener(acked);
            break;
          }
          statuses.push(res.status);
        } catch {
          // The host went away mid-request: the retry goes to whichever host is up next.
        }
        failedAttempts++;
        if (failedAttempts > 200) throw new Error(`request ${key} never answered 200 (statuses ${statuses.join(',')})`);
      }
    }
  };
  const running = Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
  return {
    done,
    statuses,
    onAcked: (listener: (total: number) => void) => onAcked.push(listener),
    /** Lets each client finish its current request, then resolves. */
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

async function run(target: Target): Promise<void> {
  const hosts: HostProcess[] = [];
  try {
    const first = await startHost({ storage: target.storage, instanceId: 'idem-gen-1' });
    hosts.push(first);
    let current: Promise<string> = Promise.resolve(first.base);
    const clients = keyedClients(8, () => current);
    const killAfter = 100 + Math.floor(Math.random() * 300);
    const reached = new Promise<void>((resolve) => clients.onAcked((total) => total >= killAfter && resolve()));
    // Bounded: if the target is not reached in time, the kill comes at the deadline.
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([reached, new Promise((resolve) => (deadline = setTimeout(resolve, 10_000)))]);
    clearTimeout(deadline);
    // The clients' next attempts wait for the new host from here on.
    let restarted!: (base: string) => void;
    current = new Promise((resolve) => (restarted = resolve));
    await first.kill();
    await target.settle?.('idem-gen-1');
    const second = await startHost({ storage: target.storage, instanceId: 'idem-gen-2' });
    hosts.push(second);
    restarted(second.base);
    const sentBefore = clients.done.length;
    await new Promise<void>((resolve) => clients.onAcked(() => clients.done.length >= sentBefore + 40 && resolve()));
    await clients.stop();
    await second.stop();

    expect(clients.statuses, 'answers other than 200').toEqual([]);
    const retried = clients.done.filter((request) => request.failedAttempts > 0);
    expect(retried.length, 'requests the kill interrupted').toBeGreaterThan(0);
    const { storage, close } = await target.open();
    try {
      for (const request of clients.done) {
        const stored = await storage.findByExternalId(HOST_PRINCIPAL, request.key, 100);
        expect(stored.length, `messages of key ${request.key}`).toBe(request.messages);
        const answered = (JSON.parse(request.answer) as { message_ref: string }[]).map((item) => item.message_ref);
        expect(answered.sort(), `the answer of key ${request.key} names its stored messages`).toEqual(stored.map((m) => m.ref).sort());
      }
    } finally {
      await close();
    }
    const replayed = retried.filter((request) => request.replayed).length;
    console.log(
      `idempotency crash (${target.storage.kind}): ${clients.done.length} keys, ${retried.length} retried after the kill, ` +
        `${replayed} of them replayed (stored before the kill), each key stored once`,
    );
  } finally {
    for (const host of hosts) await host.kill();
  }
}

describe('Idempotency-Key retries across kill -9', () => {
  it('SQLite: every key\u2019s messages are stored exactly once', { timeout: 90_000 }, async () => {
    const path = join(dir, 'outbox.sqlite');
    await run({
      storage: { kind: 'sqlite', path },
      open: async () => {
        const storage = new SqliteStorage({ path });
        await storage.ready();
        return { storage, close: () => storage.close() };
      },
    });
  });

  (pgUnavailable === null ? it : it.skip)('PostgreSQL: every key\u2019s messages are stored exactly once', { timeout: 90_000 }, async () => {
    const schema = newSchema('e2e_idem');
    await run({
      storage: { kind: 'postgres', schema },
      open: async () => {
        const pool = makePool(4);
        const storage = new PostgresStorage({ pool, schema });
        await storage.ready();
        return { storage, close: () => pool.end() };
      },
      settle: hostStatementsSettled,
    });
  });
});
