/**
 * PostgresStorage's migrations: schemas made by earlier versions brought forward, a newer
 * one refused, and its functions added, replaced or left be.
 */
import { expect, it } from 'vitest';
import { outcome } from '../../src/lifecycle/states.js';
import type { NewMessage } from '../../src/storage/contract.js';
import { PostgresStorage } from '../../src/storage/postgres/adapter.js';
import { migrations } from '../../src/storage/postgres/migrations.js';
import { buildNewMessage } from '../../src/testing/storage-suite/index.js';
import { ALL_VERSIONS, dbDescribe, dropSchema, freshSchema, pool, usePostgres } from './postgres-setup.js';

usePostgres();

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
