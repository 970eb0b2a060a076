import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { makePool, postgresUnavailable } from '../helpers/services.js';
import { afterAll, describe, expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import type { NewMessage, Outcome, PartReceipt, ReceiptResult, Storage } from '../../src/storage/contract.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { migrations } from '../../src/storage/postgres/migrations.js';
import { PostgresStorage as FromEntry } from '../../src/postgres.js';
import { buildNewMessage, runStorageContract } from '../../src/testing/storage-suite/index.js';


const pool = makePool();

/** Why the database tests are skipped, or `null` when PostgreSQL answers. */
const unreachable = await postgresUnavailable(pool);
if (unreachable !== null) console.warn(`PostgresStorage tests skipped: ${unreachable}`);

afterAll(async () => {
  await pool.end();
});

/** A schema name no other test uses. */
function freshSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

async function dropSchema(schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * Entries read so far from index `index` of `schema`, as the statistics count them. `single`
 * is a pool of one connection that did the reads: its pending counts are flushed first.
 */
async function indexReads(single: pg.Pool, schema: string, index: string): Promise<number> {
  await single.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await pool.query<{ reads: string }>(
    'SELECT idx_tup_read AS reads FROM pg_stat_user_indexes WHERE schemaname = $1 AND indexrelname = $2',
    [schema, index],
  );
  return Number(rows[0]!.reads);
}

const schemas = new WeakMap<Storage, string>();
const dbDescribe = unreachable === null ? describe : describe.skip;

runStorageContract(
  { describe: dbDescribe, it },
  {
    name: 'PostgresStorage',
    create: async () => {
      const schema = freshSchema();
      const storage = new PostgresStorage({ pool, schema });
      schemas.set(storage, schema);
      return storage;
    },
    destroy: async (storage) => {
      const schema = schemas.get(storage);
      if (schema !== undefined) await dropSchema(schema);
    },
  },
);


/**
 * Runs `work` with a PostgresStorage in a fresh schema on a pool that counts the queries its
 * clients send (each one round trip; reset `queries.count` at will), then ends the pool and
 * drops the schema.
 */
async function withCountedStorage(
  work: (t: { storage: PostgresStorage; queries: { count: number }; schema: string }) => Promise<void>,
): Promise<void> {
  const counted = makePool();
  const queries = { count: 0 };
  counted.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      queries.count += 1;
      return query(...args);
    };
  });
  const schema = freshSchema();
  try {
    await work({ storage: new PostgresStorage({ pool: counted, schema }), queries, schema });
  } finally {
    await counted.end();
    await dropSchema(schema);
  }
}

describe('PostgresStorage options', () => {
  it('is what sms-outbox/postgres exports', () => {
    expect(FromEntry).toBe(PostgresStorage);
  });

  it('rejects a schema name that is not a plain identifier', () => {
    for (const schema of ['', '1abc', 'a-b', 'x"; DROP SCHEMA public; --', 'a'.repeat(64), 'caf\u00e9']) {
      expect(() => new PostgresStorage({ pool, schema })).toThrow(TypeError);
    }
  });

  it('rejects a misspelt option with a hint', () => {
    expect(() => new PostgresStorage({ pool, scheme: 'x' } as never)).toThrow(/Did you mean `schema`\?/);
  });

  it('rejects a missing pool', () => {
    expect(() => new PostgresStorage({} as never)).toThrow(/pool/);
    expect(() => new PostgresStorage({ pool: 'postgres://localhost' } as never)).toThrow(/pool/);
  });
});

/** Every migration's version, as a schema made by this version records them. */
const ALL_VERSIONS = migrations('"x"').map(({ version }) => ({ version }));

/** Makes `schema` as a version that knew migrations up to `version` left it. */
async function schemaAsVersion(schema: string, version: number): Promise<void> {
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await pool.query(`CREATE TABLE "${schema}".migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`);
  for (const migration of migrations(`"${schema}"`).filter((m) => m.version <= version)) {
    for (const statement of migration.statements) await pool.query(statement);
    await pool.query(`INSERT INTO "${schema}".migrations (version, applied_at) VALUES ($1, 0)`, [migration.version]);
  }
}

/** A part as schema versions 1-3 kept it: its carrier id and `[state, reason, description]`. */
interface PartRowV3 {
  carrierId: string | null;
  outcome: [string, string, string | null] | null;
}

/** Stores `message` in `state` as versions 1-3 did: its row, a row per part, its carrier ids. */
async function insertAsVersion3(schema: string, m: NewMessage, parts: PartRowV3[], state = 'queued'): Promise<void> {
  await pool.query(
    `INSERT INTO "${schema}".messages (ref, principal_id, endpoint, profile_code, sender, recipient, text, message_type,
      req_type, external_id, recipient_field, reference_field, sms_count, encoding, callback_url, callback_secret,
      created_at, state, attempts, next_attempt_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, 0, $17, $17)`,
    [m.ref, m.principalId, m.endpoint, m.profileCode, m.sender, m.recipient, m.text, m.messageType, m.reqType,
      m.externalId, m.recipientField, m.referenceField, m.smsCount, m.encoding, m.callbackUrl, m.callbackSecret,
      m.createdAt, state],
  );
  for (const [idx, part] of parts.entries()) {
    await pool.query(
      `INSERT INTO "${schema}".parts (ref, idx, carrier_id, outcome_state, outcome_reason, outcome_description)
      VALUES ($1, $2, $3, $4, $5, $6)`,
      [m.ref, idx, part.carrierId, part.outcome?.[0] ?? null, part.outcome?.[1] ?? null, part.outcome?.[2] ?? null],
    );
    if (part.carrierId !== null) {
      await pool.query(`INSERT INTO "${schema}".carrier_ids (carrier_id, ref, idx) VALUES ($1, $2, $3)`, [part.carrierId, m.ref, idx]);
    }
  }
}

dbDescribe('PostgresStorage', () => {
  it('creates its tables in the schema it is given, and ready() is memoised', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const first = storage.ready();
      expect(storage.ready()).toBe(first);
      await first;
      const { rows } = await pool.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [schema],
      );
      expect(rows.map((row) => row.table_name)).toEqual(['callbacks', 'carrier_ids', 'credit_balances', 'credit_charges', 'idempotency_keys', 'inbound', 'messages', 'migrations', 'opt_outs']);
      const versions = await pool.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      expect(versions.rows).toEqual(ALL_VERSIONS);
    } finally {
      await dropSchema(schema);
    }
  });

  it('creates the schema on first use without an explicit ready()', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const message = buildNewMessage();
      await storage.insertMessages([message]);
      expect((await storage.getMessage(message.principalId, message.ref))?.state).toBe('queued');
    } finally {
      await dropSchema(schema);
    }
  });

  it('close() leaves the host pool open', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      await storage.ready();
      await storage.close();
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await dropSchema(schema);
    }
  });

  it('inserts 1,000 messages in one round trip, each with its parts', async () => {
    await withCountedStorage(async ({ storage, queries, schema }) => {
      await storage.ready();
      const messages = Array.from({ length: 1_000 }, (_, i) => buildNewMessage({ smsCount: (i % 3) + 1 }));
      queries.count = 0;
      await storage.insertMessages(messages);
      expect(queries.count).toBeGreaterThan(0);
      expect(queries.count).toBe(1);
      const { rows } = await pool.query<{ messages: string; parts: string }>(
        `SELECT count(*) AS messages, sum(jsonb_array_length(parts)) AS parts FROM "${schema}".messages`,
      );
      expect(rows[0]).toEqual({ messages: '1000', parts: String(messages.reduce((sum, m) => sum + m.smsCount, 0)) });
    });
  });

  it('stores concurrent requests in one statement, and a request that fails fails alone', async () => {
    await withCountedStorage(async ({ storage, queries }) => {
      const taken = buildNewMessage();
      await storage.insertMessages([taken]);
      const requests = Array.from({ length: 20 }, () => [buildNewMessage(), buildNewMessage({ smsCount: 2 })]);
      queries.count = 0;
      expect(await Promise.all(requests.map((messages) => storage.insertMessages(messages)))).toHaveLength(20);
      expect(queries.count).toBeLessThanOrEqual(2);

      const again = [[buildNewMessage()], [buildNewMessage(), { ...taken }], [buildNewMessage()]];
      const outcomes = await Promise.allSettled(again.map((messages) => storage.insertMessages(messages)));
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      for (const [i, messages] of again.entries()) {
        for (const message of messages) {
          const stored = await storage.getMessage(message.principalId, message.ref);
          // The failed request stored none of its messages; `taken` was there before.
          expect(stored !== null).toBe(i !== 1 || message.ref === taken.ref);
        }
      }
    });
  });

  it('records concurrent submissions, receipts and report attempts in shared statements, each with its own result', async () => {
    await withCountedStorage(async ({ storage, queries, schema }) => {
      const messages = Array.from({ length: 60 }, (_, i) =>
        buildNewMessage({ smsCount: (i % 3) + 1, callbackUrl: i % 2 === 0 ? 'https://client.example/dlr' : null }),
      );
      await storage.insertMessages(messages);
      const parts = messages.flatMap((m) => Array.from({ length: m.smsCount }, (_, index) => ({ ref: m.ref, index })));
      queries.count = 0;
      const submitted = await Promise.all(
        parts.map(({ ref, index }) => storage.recordSubmission(ref, index, `c-${ref}-${index}`, 10)),
      );
      expect(queries.count).toBeLessThanOrEqual(3);
      // Exactly one call per message saw its last part arrive, whatever order they ran in.
      const moved = submitted.flatMap((r) => (r.kind === 'submitted' ? [r.transition.message.ref] : []));
      expect(moved.sort()).toEqual(messages.map((m) => m.ref).sort());
      expect(submitted.filter((r) => r.kind === 'part')).toHaveLength(parts.length - messages.length);

      queries.count = 0;
      const applied = await Promise.all(
        parts.map(({ ref, index }) =>
          storage.applyReceipt({ carrierIds: [`c-${ref}-${index}`], outcome: outcome('delivered', 'delivered_to_terminal'), now: 20 }),
        ),
      );
      expect(queries.count).toBeLessThanOrEqual(3);
      const ended = applied.flatMap((r) => (r.kind === 'terminal' ? [r.transition] : []));
      expect(ended.map((t) => t.message.ref).sort()).toEqual(messages.map((m) => m.ref).sort());
      for (const transition of ended) {
        expect(transition.message.state).toBe('delivered');
        expect(transition.message.callback?.state ?? null).toBe(transition.message.callbackUrl === null ? null : 'pending');
      }
      // Each report has its own uid: as many pending reports as messages with a URL.
      const reports = await pool.query(`SELECT count(DISTINCT uid)::int AS n FROM "${schema}".callbacks`);
      expect(reports.rows[0]).toEqual({ n: messages.filter((m) => m.callbackUrl !== null).length });
      // A receipt again is a duplicate, in a batch as alone.
      const repeated = await Promise.all(
        parts.slice(0, 5).map(({ ref, index }) =>
          storage.applyReceipt({ carrierIds: ['unknown-spelling', `c-${ref}-${index}`], outcome: outcome('delivered', 'delivered_to_terminal'), now: 30 }),
        ),
      );
      expect(repeated.map((r) => r.kind)).toEqual(Array(5).fill('duplicate'));

      // The reports' attempts, too: each ends as its own result says.
      const due = await storage.claimCallbacks({ owner: 'o', limit: 100, leaseMs: 1_000, now: 40 });
      expect(due).toHaveLength(messages.filter((m) => m.callbackUrl !== null).length);
      queries.count = 0;
      await Promise.all(
        due.map(({ uid }, i) =>
          storage.recordCallbackAttempt(uid, {
            result: i % 3 === 0 ? 'delivered' : i % 3 === 1 ? 'retry' : 'failed',
            statusCode: i % 3 === 0 ? 200 : 503,
            error: null,
            nextAttemptAt: 1_000 + i,
            now: 50,
          }),
        ),
      );
      expect(queries.count).toBeLessThanOrEqual(3);
      for (const [i, { uid, message }] of due.entries()) {
        const stored = await storage.getMessage(message.principalId, message.ref);
        expect(stored?.callback).toMatchObject({
          state: i % 3 === 0 ? 'delivered' : i % 3 === 1 ? 'pending' : 'failed',
          attempts: 1,
          lastStatusCode: i % 3 === 0 ? 200 : 503,
          nextAttemptAt: i % 3 === 1 ? 1_000 + i : null,
        });
        expect(uid).toBeTruthy();
      }
    });
  });

  it('answers each call of a batch as the call alone would, in every case a step can meet', async () => {
    // The same messages in two schemas; one gets each step's calls at once (one batch: the
    // first call naming each message applied by one statement, the calls naming one again
    // after it, one by one), the other one call at a time (the single-item functions).
    // Results and records must be the same.
    const delivered = outcome('delivered', 'delivered_to_terminal');
    const absent = outcome('undelivered', 'absent_subscriber');
    const url = 'https://client.example/dlr';
    const m = {
      single: buildNewMessage({ callbackUrl: url, createdAt: 1 }),
      noUrl: buildNewMessage({ createdAt: 1 }),
      twoParts: buildNewMessage({ smsCount: 2, callbackUrl: url, createdAt: 1 }),
      failedPart: buildNewMessage({ smsCount: 2, callbackUrl: url, createdAt: 1 }),
      ended: buildNewMessage({ callbackUrl: url, createdAt: 1 }),
      reported: buildNewMessage({ createdAt: 1 }),
      spelled: buildNewMessage({ createdAt: 1 }),
      outOfRange: buildNewMessage({ createdAt: 1 }),
      bothParts: buildNewMessage({ smsCount: 2, callbackUrl: url, createdAt: 1 }),
    };
    const prepare = async (storage: Storage): Promise<void> => {
      await storage.insertMessages(Object.values(m));
      for (const message of [m.failedPart, m.reported, m.spelled]) {
        for (let index = 0; index < message.smsCount; index++) {
          await storage.recordSubmission(message.ref, index, `${message.ref}-${index}`, 5);
        }
      }
      await storage.recordSubmission(m.twoParts.ref, 1, `${m.twoParts.ref}-1`, 5);
      await storage.applyReceipt({ carrierIds: [`${m.failedPart.ref}-0`], outcome: absent, now: 6 });
      await storage.applyReceipt({ carrierIds: [`${m.reported.ref}-0`], outcome: delivered, now: 6 });
      await storage.finish(m.ended.ref, outcome('failed', 'rejected'), 7);
    };
    const submissions: [string, number, string][] = [
      [m.single.ref, 0, 'id-single'],
      [m.noUrl.ref, 0, 'id-no-url'],
      [m.twoParts.ref, 0, 'id-two-parts-0'], // its last part: submitted
      [m.ended.ref, 0, 'id-ended'], // stale, yet indexed
      [m.outOfRange.ref, 3, 'id-out-of-range'], // stale: no such part
      ['no-such-ref', 0, 'id-nowhere'], // stale
      [m.bothParts.ref, 0, 'id-both-0'], // part
      [m.bothParts.ref, 1, 'id-both-1'], // the same message again: submitted
    ];
    const receipts: [string[], Outcome][] = [
      [['id-single'], delivered], // terminal, with a report
      [['id-no-url'], absent], // terminal, no report
      [['id-two-parts-0'], delivered], // part: part 1 still awaits its receipt
      [[`${m.failedPart.ref}-1`], delivered], // terminal with part 0's failure
      [['id-ended'], delivered], // late
      [[`${m.reported.ref}-0`], absent], // duplicate
      [['not-stored', `${m.spelled.ref}-0`], delivered], // the second spelling
      [['id-nowhere'], delivered], // unknown
      [['id-both-1'], absent], // part
      [['id-both-0'], delivered], // the same message again: terminal with part 1's failure
      [['id-single'], delivered], // the same receipt again: duplicate
    ];
    const [batchedSchema, aloneSchema] = [freshSchema(), freshSchema()];
    const batched = new PostgresStorage({ pool, schema: batchedSchema });
    const alone = new PostgresStorage({ pool, schema: aloneSchema });
    try {
      await prepare(batched);
      await prepare(alone);
      const batchedSubmissions = await Promise.all(submissions.map(([ref, index, id]) => batched.recordSubmission(ref, index, id, 10)));
      const aloneSubmissions = [];
      for (const [ref, index, id] of submissions) aloneSubmissions.push(await alone.recordSubmission(ref, index, id, 10));
      expect(batchedSubmissions.map((r) => r.kind)).toEqual(['submitted', 'submitted', 'submitted', 'stale', 'stale', 'stale', 'part', 'submitted']);
      expect(batchedSubmissions).toEqual(aloneSubmissions);

      // Reports leased as three receipts ask: one ending a message in the statement over the
      // batch, one ending a message without a URL, and one ending a message one by one.
      const leased = new Set([0, 1, 9]);
      const receipt = (i: number): PartReceipt => ({
        carrierIds: receipts[i]![0],
        outcome: receipts[i]![1],
        now: 20,
        ...(leased.has(i) ? { reportLease: { owner: 'this-instance', until: 60_020 } } : {}),
      });
      const batchedReceipts = await Promise.all(receipts.map((_, i) => batched.applyReceipt(receipt(i))));
      const aloneReceipts = [];
      for (const i of receipts.keys()) aloneReceipts.push(await alone.applyReceipt(receipt(i)));
      expect(batchedReceipts.map((r) => r.kind)).toEqual([
        'terminal', 'terminal', 'part', 'terminal', 'late', 'duplicate', 'terminal', 'unknown', 'part', 'terminal', 'duplicate',
      ]);
      const leasedReports = (results: ReceiptResult[]) =>
        results.map((r) => (r.kind === 'terminal' ? (r.transition.leasedReport ?? null) : null));
      expect(leasedReports(batchedReceipts).map((report) => report?.until ?? null)).toEqual([
        60_020, null, null, null, null, null, null, null, null, 60_020, null,
      ]);
      // The uids are made per call, so they differ between the schemas; all else is the same.
      const withoutUids = (results: ReceiptResult[]) =>
        results.map((r) =>
          r.kind === 'terminal' && r.transition.leasedReport !== undefined
            ? { ...r, transition: { ...r.transition, leasedReport: { ...r.transition.leasedReport, uid: '' } } }
            : r,
        );
      expect(withoutUids(batchedReceipts)).toEqual(withoutUids(aloneReceipts));
      const leasedUids = await pool.query<{ uid: string }>(
        `SELECT uid FROM "${batchedSchema}".callbacks WHERE lease_owner = 'this-instance' AND lease_until = 60020 ORDER BY ref`,
      );
      expect(leasedUids.rows.map((row) => row.uid).sort()).toEqual(
        leasedReports(batchedReceipts).flatMap((report) => (report === null ? [] : [report.uid])).sort(),
      );
      const failed = batchedReceipts[3]!;
      expect(failed.kind === 'terminal' && failed.transition.message).toMatchObject({ state: 'undelivered', statusReason: 'absent_subscriber' });

      for (const message of Object.values(m)) {
        const record = await batched.getMessage(message.principalId, message.ref);
        expect(record).toEqual(await alone.getMessage(message.principalId, message.ref));
      }
      const reports = async (schema: string): Promise<unknown[]> =>
        (await pool.query(`SELECT ref, state, next_attempt_at, lease_owner, lease_until FROM "${schema}".callbacks ORDER BY ref`)).rows;
      expect(await reports(batchedSchema)).toEqual(await reports(aloneSchema));
      expect(await reports(batchedSchema)).toHaveLength(4);
    } finally {
      await dropSchema(batchedSchema);
      await dropSchema(aloneSchema);
    }
  });

  it('has no foreign keys, and purge takes a message\'s carrier ids and report with it', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      await storage.ready();
      const keys = await pool.query(
        `SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = $1::regnamespace`,
        [`"${schema}"`],
      );
      expect(keys.rows[0]).toEqual({ n: 0 });

      const gone = buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr', createdAt: 10 });
      const kept = buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr', createdAt: 10 });
      await storage.insertMessages([gone, kept]);
      for (const message of [gone, kept]) {
        for (const index of [0, 1]) await storage.recordSubmission(message.ref, index, `${message.ref}-${index}`, 20);
        for (const index of [0, 1]) {
          await storage.applyReceipt({ carrierIds: [`${message.ref}-${index}`], outcome: outcome('delivered', 'delivered_to_terminal'), now: 30 });
        }
      }
      const [report] = await storage.claimCallbacks({ owner: 'o', limit: 1, leaseMs: 1_000, now: 40 });
      expect(report?.message.ref).toBe(gone.ref);
      await storage.recordCallbackAttempt(report!.uid, { result: 'delivered', statusCode: 200, error: null, nextAttemptAt: null, now: 50 });

      // `kept` still has a pending report, so only `gone` may go.
      expect(await storage.purge(1_000, 10)).toBe(1);
      const left = await pool.query<{ table: string; ref: string }>(
        `SELECT 'messages' AS table, ref FROM "${schema}".messages UNION ALL
         SELECT 'carrier_ids', ref FROM "${schema}".carrier_ids UNION ALL
         SELECT 'callbacks', ref FROM "${schema}".callbacks`,
      );
      expect(left.rows.filter((row) => row.ref === gone.ref)).toEqual([]);
      expect(left.rows.filter((row) => row.ref === kept.ref).map((row) => row.table).sort()).toEqual(
        ['callbacks', 'carrier_ids', 'carrier_ids', 'messages'],
      );
    } finally {
      await dropSchema(schema);
    }
  });

  it('drops the foreign keys of a schema made by an earlier version, keeping its rows', async () => {
    const schema = freshSchema();
    try {
      // As version 2 left it: the foreign keys of version 1, migrations 3 and 4 not applied.
      await schemaAsVersion(schema, 2);
      const message = buildNewMessage();
      await insertAsVersion3(schema, message, [{ carrierId: null, outcome: null }]);

      const storage = new PostgresStorage({ pool, schema });
      await storage.ready();
      const keys = await pool.query(
        `SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = $1::regnamespace`,
        [`"${schema}"`],
      );
      expect(keys.rows[0]).toEqual({ n: 0 });
      expect((await storage.getMessage(message.principalId, message.ref))?.parts).toEqual([
        { index: 0, carrierId: null, outcome: null },
      ]);
    } finally {
      await dropSchema(schema);
    }
  });

  it('moves the parts of a version 3 schema into their messages, and its messages carry on from where they were', async () => {
    const schema = freshSchema();
    try {
      await schemaAsVersion(schema, 3);
      // Version 3's functions, as an instance of it left them: migration 4 drops them.
      await pool.query(`CREATE FUNCTION "${schema}".record_submission(p_ref text, p_idx integer, p_carrier_id text,
        p_now bigint) RETURNS json LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'version 3'; END $$`);
      const halfReported = buildNewMessage({ smsCount: 3, callbackUrl: 'https://client.example/dlr' });
      const queued = buildNewMessage({ smsCount: 1 });
      await insertAsVersion3(schema, halfReported, [
        { carrierId: 'old-0', outcome: ['delivered', 'delivered_to_terminal', null] },
        { carrierId: 'old-1', outcome: ['undelivered', 'absent_subscriber', 'no route'] },
        { carrierId: 'old-2', outcome: null },
      ], 'submitted');
      await insertAsVersion3(schema, queued, [{ carrierId: null, outcome: null }]);

      const storage = new PostgresStorage({ pool, schema });
      await storage.ready();
      expect((await storage.getMessage(halfReported.principalId, halfReported.ref))?.parts).toEqual([
        // Version 3 read a missing description as ''.
        { index: 0, carrierId: 'old-0', outcome: { state: 'delivered', reason: 'delivered_to_terminal', description: '' } },
        { index: 1, carrierId: 'old-1', outcome: { state: 'undelivered', reason: 'absent_subscriber', description: 'no route' } },
        { index: 2, carrierId: 'old-2', outcome: null },
      ]);
      // The last receipt ends it with the first part that was not delivered.
      const last = await storage.applyReceipt({ carrierIds: ['old-2'], outcome: outcome('delivered', 'delivered_to_terminal'), now: 50 });
      expect(last.kind === 'terminal' && last.transition.message).toMatchObject({
        state: 'undelivered',
        statusReason: 'absent_subscriber',
        statusDescription: 'no route',
        callback: { state: 'pending' },
      });
      expect((await storage.recordSubmission(queued.ref, 0, 'new-0', 60)).kind).toBe('submitted');

      const tables = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [schema]);
      expect(tables.rows.map((row: { table_name: string }) => row.table_name)).not.toContain('parts');
      const names = await pool.query<{ proname: string }>(
        `SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`,
        [schema],
      );
      // The credit ledger's functions are its migration's own, with their own suffix (storage/postgres/credit.ts).
      expect(names.rows.filter((row) => !row.proname.startsWith('credit_')).every((row) => row.proname.endsWith('_v5'))).toBe(true);
    } finally {
      await dropSchema(schema);
    }
  });

  it('refuses a schema migrated by a newer version, and leaves its functions alone', async () => {
    const schema = freshSchema();
    try {
      await new PostgresStorage({ pool, schema }).ready();
      await pool.query(`INSERT INTO "${schema}".migrations (version, applied_at) VALUES (99, 0)`);
      await pool.query(`DROP FUNCTION "${schema}".finish_v5`);
      await expect(new PostgresStorage({ pool, schema }).ready()).rejects.toThrow(`at migration 99, newer than this version of sms-outbox knows (${ALL_VERSIONS.length})`);
      const finish = await pool.query(
        `SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'finish_v5'`,
        [schema],
      );
      expect(finish.rows[0]).toEqual({ n: 0 });
    } finally {
      await dropSchema(schema);
    }
  });

  it('keeps times past 2^31 ms exact as numbers', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const message = buildNewMessage({ createdAt: 4_102_444_800_123 });
      await storage.insertMessages([message]);
      const record = await storage.getMessage(message.principalId, message.ref);
      expect(record?.createdAt).toBe(4_102_444_800_123);
      expect(record?.updatedAt).toBe(4_102_444_800_123);
    } finally {
      await dropSchema(schema);
    }
  });

  it('stores text with quotes, backslashes and non-BMP characters unchanged', async () => {
    const schema = freshSchema();
    const storage = new PostgresStorage({ pool, schema });
    try {
      const text = `it's "quoted" \\ {a,b} NULL \u{1f600} \u00e9`;
      const message = buildNewMessage({ text, externalId: 'NULL', callbackSecret: '{}' });
      await storage.insertMessages([message]);
      const record = await storage.getMessage(message.principalId, message.ref);
      expect(record?.text).toBe(text);
      expect(record?.externalId).toBe('NULL');
      expect(record?.callbackSecret).toBe('{}');
      expect(record?.callbackUrl).toBeNull();
    } finally {
      await dropSchema(schema);
    }
  });

  it('runs each per-message step in one round trip', async () => {
    await withCountedStorage(async ({ storage, queries }) => {
      const delivered = outcome('delivered', 'delivered_to_terminal');
      const step = async <T>(work: () => Promise<T>): Promise<T> => {
        queries.count = 0;
        const result = await work();
        expect(queries.count).toBe(1);
        return result;
      };
      await storage.ready();
      const [two, one, overdue] = [
        buildNewMessage({ smsCount: 2, callbackUrl: 'https://client.example/dlr' }),
        buildNewMessage(),
        buildNewMessage(),
      ];
      await storage.insertMessages([two!, one!, overdue!]);
      expect((await step(() => storage.recordSubmission(two!.ref, 0, 'a0', 10))).kind).toBe('part');
      expect((await step(() => storage.recordSubmission(two!.ref, 1, 'a1', 11))).kind).toBe('submitted');
      const now = 20;
      expect((await step(() => storage.applyReceipt({ carrierIds: ['a0'], outcome: delivered, now }))).kind).toBe('part');
      const terminal = await step(() => storage.applyReceipt({ carrierIds: ['x', 'a1'], outcome: delivered, now }));
      expect(terminal.kind === 'terminal' && terminal.transition.message.callback?.state).toBe('pending');
      expect((await step(() => storage.finish(one!.ref, outcome('failed', 'unknown'), 30)))?.message.state).toBe('failed');
      await storage.recordSubmission(overdue!.ref, 0, 'o0', 40);
      const expired = await step(() => storage.expireOverdue(50, 10, outcome('expired', 'unknown'), 60));
      expect(expired.map((transition) => transition.message.ref)).toEqual([overdue!.ref]);
    });
  });

  it('claims from a backlog it has no statistics for by reading the oldest queued rows, not every one, and without compiling the claim', async () => {
    // A new schema has no statistics until autovacuum first analyzes it. Without them the
    // planner chose, for each claim, a bitmap scan of every queued row and a sort (134 ms a
    // claim at 146,000 queued in the benchmark, against 0.2 ms reading the index in order),
    // and costed the claim so high that PostgreSQL compiled it with JIT first (300-450 ms).
    const single = makePool(1);
    // The one connection's plans, as auto_explain logs them (sent here as notices).
    const plans: string[] = [];
    single.on('connect', (client) => client.on('notice', (notice) => plans.push(notice.message ?? '')));
    const schema = freshSchema();
    try {
      const storage = new PostgresStorage({ pool: single, schema });
      const backlog = Array.from({ length: 30_000 }, (_, i) => buildNewMessage({ createdAt: 1_000 + i }));
      for (let i = 0; i < backlog.length; i += 3_000) await storage.insertMessages(backlog.slice(i, i + 3_000));
      const explained = await single
        .query(`LOAD 'auto_explain'`)
        .then(() => single.query(`SET auto_explain.log_min_duration = 0; SET client_min_messages = log`))
        .then(
          () => true,
          (error: unknown) => {
            console.warn(`PostgresStorage: the claim's plan is not checked for JIT (auto_explain: ${String(error)})`);
            return false;
          },
        );

      const queuedIndexReads = () => indexReads(single, schema, 'messages_queued_idx');
      const before = await queuedIndexReads();
      const claimed = await storage.claimMessages({ owner: 'w', limit: 64, leaseMs: 60_000, now: 100_000 });
      expect(claimed.map((message) => message.ref)).toEqual(backlog.slice(0, 64).map((message) => message.ref));
      const read = (await queuedIndexReads()) - before;
      expect(read).toBeGreaterThanOrEqual(64);
      expect(read).toBeLessThan(1_000);
      if (explained) {
        const claimPlan = plans.find((plan) => plan.includes('due_messages'));
        expect(claimPlan).toBeDefined();
        expect(claimPlan).not.toMatch(/JIT:/);
      }
    } finally {
      await single.end();
      await dropSchema(schema);
    }
  });

  it('records report attempts by their uids, not by reading every pending report, in a schema it has no statistics for', async () => {
    // With `state = 'pending'` in the attempt's UPDATE, the planner, believing few reports
    // pending, read all of them through their partial index for each batch of attempts.
    const single = makePool(1);
    const schema = freshSchema();
    try {
      const storage = new PostgresStorage({ pool: single, schema });
      const messages = Array.from({ length: 5_000 }, (_, i) => buildNewMessage({ callbackUrl: 'https://client.example/dlr', createdAt: 1_000 + i }));
      for (let i = 0; i < messages.length; i += 1_000) await storage.insertMessages(messages.slice(i, i + 1_000));
      for (const message of messages) await storage.finish(message.ref, outcome('delivered', 'delivered_to_terminal'), 2_000);
      const due = await storage.claimCallbacks({ owner: 'o', limit: 64, leaseMs: 60_000, now: 3_000 });
      expect(due).toHaveLength(64);

      const pendingIndexReads = () => indexReads(single, schema, 'callbacks_pending_idx');
      const before = await pendingIndexReads();
      await Promise.all(
        due.map(({ uid }) => storage.recordCallbackAttempt(uid, { result: 'delivered', statusCode: 200, error: null, nextAttemptAt: null, now: 4_000 })),
      );
      expect((await pendingIndexReads()) - before).toBeLessThan(1_000);
      for (const { message } of due.slice(0, 3)) {
        expect((await storage.getMessage(message.principalId, message.ref))?.callback).toMatchObject({ state: 'delivered', attempts: 1 });
      }
      const stillPending = await single.query(`SELECT count(*)::int AS n FROM "${schema}".callbacks WHERE state = 'pending'`);
      expect(stillPending.rows[0]).toEqual({ n: messages.length - 64 });
    } finally {
      await single.end();
      await dropSchema(schema);
    }
  });

  it('ends overdue messages from a backlog it has no statistics for by reading the oldest, not every one', async () => {
    // A carrier that stops sending receipts leaves every message submitted; each sweep of
    // expireOverdue then read and sorted all of them (a bitmap scan) in a schema not yet
    // analyzed.
    const single = makePool(1);
    const schema = freshSchema();
    try {
      const storage = new PostgresStorage({ pool: single, schema });
      const submitted = Array.from({ length: 10_000 }, (_, i) => buildNewMessage({ createdAt: i }));
      await storage.insertMessages(submitted);
      for (let i = 0; i < submitted.length; i += 1_000) {
        await Promise.all(
          submitted.slice(i, i + 1_000).map((message, k) => storage.recordSubmission(message.ref, 0, `c-${i + k}`, 10_000 + i + k)),
        );
      }
      const overdueIndexReads = () => indexReads(single, schema, 'messages_overdue');
      const before = await overdueIndexReads();
      const ended = await storage.expireOverdue(1e12, 100, outcome('expired', 'expired'), 2e12);
      expect(ended.map((transition) => transition.message.ref)).toEqual(submitted.slice(0, 100).map((message) => message.ref));
      const read = (await overdueIndexReads()) - before;
      expect(read).toBeGreaterThanOrEqual(100);
      expect(read).toBeLessThan(1_000);
    } finally {
      await single.end();
      await dropSchema(schema);
    }
  });

  it('adds the functions whose arguments changed beside the earlier ones, which an earlier instance still calls', async () => {
    const schema = freshSchema();
    try {
      await new PostgresStorage({ pool, schema }).ready();
      // As an instance of the version before the report lease left them (their arguments
      // then), standing in for its bodies: each answers which one ran.
      await pool.query(`CREATE OR REPLACE FUNCTION "${schema}".apply_receipt_v5(p_carrier_ids text[], p_state text,
        p_reason text, p_description text, p_now bigint, p_uid text) RETURNS json LANGUAGE sql AS $$ SELECT '"earlier"'::json $$`);
      await new PostgresStorage({ pool, schema }).ready();
      const overloads = await pool.query<{ f: string }>(
        `SELECT p.oid::regprocedure::text AS f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = $1 AND p.proname = 'apply_receipt_v5' ORDER BY 1`,
        [schema],
      );
      expect(overloads.rows.map((row) => row.f.replace(/^.*\./, ''))).toEqual([
        'apply_receipt_v5(text[],text,text,text,bigint,text)',
        'apply_receipt_v5(text[],text,text,text,bigint,text,text,bigint)',
      ]);
      const earlier = await pool.query(`SELECT "${schema}".apply_receipt_v5(ARRAY['x'], 'delivered', 'r', 'd', 1, 'u') AS result`);
      expect(earlier.rows[0].result).toBe('earlier');
      const storage = new PostgresStorage({ pool, schema });
      expect((await storage.applyReceipt({ carrierIds: ['x'], outcome: outcome('delivered', 'delivered_to_terminal'), now: 1 })).kind).toBe('unknown');
    } finally {
      await dropSchema(schema);
    }
  });

  it('creates its functions in a schema migrated before they existed, replaces changed ones, and leaves current ones be', async () => {
    const schema = freshSchema();
    const functions = async (): Promise<{ proname: string; xmin: string }[]> =>
      (
        await pool.query<{ proname: string; xmin: string }>(
          `SELECT p.proname, p.xmin::text AS xmin FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = $1 ORDER BY p.proname`,
          [schema],
        )
      ).rows;
    try {
      await new PostgresStorage({ pool, schema }).ready();
      const created = await functions();
      expect(created.map((row) => row.proname)).toEqual([
        'apply_receipt_v5',
        'apply_receipts_v5',
        'cancel_messages_v5',
        'credit_forget_v1',
        'credit_refund_v1',
        'credit_take_v1',
        'due_callbacks_v5',
        'due_messages_v5',
        'expire_overdue_v5',
        'expire_unsent_v5',
        'fair_starts_v5',
        'finish_v5',
        'promote_scheduled_v5',
        'record_submission_v5',
        'record_submissions_v5',
        'terminate_v5',
      ]);
      // A start that finds them current writes nothing.
      await new PostgresStorage({ pool, schema }).ready();
      expect(await functions()).toEqual(created);

      // As a version before the functions left it: the tables, no functions; and a function
      // from some other version of the code on the same schema.
      for (const name of ['apply_receipt', 'apply_receipts', 'due_callbacks', 'due_messages', 'expire_overdue', 'fair_starts', 'finish', 'record_submission', 'record_submissions']) {
        await pool.query(`DROP FUNCTION "${schema}".${name}_v5`);
      }
      await pool.query(`CREATE OR REPLACE FUNCTION "${schema}".terminate_v5(p_ref text, p_previous_state text, p_state text,
        p_reason text, p_description text, p_now bigint, p_uid text, p_parts jsonb, p_lease_owner text, p_lease_until bigint)
        RETURNS json LANGUAGE plpgsql
        AS $$ BEGIN RAISE EXCEPTION 'old version'; END $$`);
      const storage = new PostgresStorage({ pool, schema });
      const message = buildNewMessage({ callbackUrl: 'https://client.example/dlr' });
      await storage.insertMessages([message]);
      expect((await storage.recordSubmission(message.ref, 0, 'up-0', 10)).kind).toBe('submitted');
      const result = await storage.applyReceipt({
        carrierIds: ['up-0'],
        outcome: outcome('delivered', 'delivered_to_terminal'),
        now: 20,
      });
      expect(result.kind === 'terminal' && result.transition.message.callback?.state).toBe('pending');
      expect((await functions()).map((row) => row.proname)).toEqual(created.map((row) => row.proname));
      const versions = await pool.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      expect(versions.rows).toEqual(ALL_VERSIONS);
    } finally {
      await dropSchema(schema);
    }
  });
});
