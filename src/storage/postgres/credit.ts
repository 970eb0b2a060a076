/**
 * The PostgreSQL storage's credit ledger (storage/credit-record.ts): its schema (a migration
 * of migrations.ts), its statements, and the insert of requests that carry a charge. Such a
 * batch runs as one transaction: the charges are taken first, each only if its principal's
 * balance holds it (a conditional UPDATE: a second instance waits for the row, then sees the
 * balance the first left, so two instances never overspend), then the messages of the paid
 * requests are inserted by the usual statement, then the charge rows are written (and the
 * charges of requests whose idempotency key was taken given back). Refunds are a trigger on
 * the message's state, so they happen in the step that ends a message, whichever it is.
 *
 * @module
 */
import type { Pool } from 'pg';
import { InsufficientCreditError } from '../../lifecycle/credit.js';
import type { InsertRows } from './rows.js';
import { transaction } from './transaction.js';

/** What the insert of one call came to: stored, refused for its idempotency key (false), or for its balance. */
export type InsertOutcome = boolean | InsufficientCreditError;

/** Something that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<Pool, 'query'>;

/**
 * The ledger's schema, in schema `s`: the balances, one charge row per charged message, the
 * function that takes a batch's charges, and the refund trigger. The trigger's WHEN excludes
 * `delivered` first, so the common end costs a comparison, and its function settles the
 * charge row (`refunded`: the units given back) so that it is never refunded twice; the
 * units are those {@link refundUnits} gives (unsent: the parts without a carrier id, see
 * storage/stored-parts.ts). Charge rows go with their messages when retention deletes them.
 *
 * The functions are the migration's own (prefix `credit_`, suffix `_v1`), not functions.ts's:
 * the trigger needs its function when it is created, and neither depends on the schema the
 * `_v<FUNCTIONS_SCHEMA_VERSION>` functions are written for. A change to one is a new
 * migration with a new suffix.
 */
export function creditMigration(s: string): string[] {
  return [
    `CREATE TABLE ${s}.credit_balances (
      principal_id text PRIMARY KEY,
      balance bigint NOT NULL CHECK (balance >= 0),
      updated_at bigint NOT NULL
    )`,
    `CREATE TABLE ${s}.credit_charges (
      ref text PRIMARY KEY,
      principal_id text NOT NULL,
      units integer NOT NULL,
      refund_failed boolean NOT NULL,
      charged_at bigint NOT NULL,
      refunded integer,
      settled_at bigint
    )`,
    // Locks the batch's balance rows in one order first, so two batches never deadlock.
    `CREATE FUNCTION ${s}.credit_take_v1(principals text[], amounts bigint[], at bigint) RETURNS bigint[]
    LANGUAGE plpgsql AS $$
    DECLARE
      result bigint[] := '{}';
    BEGIN
      PERFORM 1 FROM ${s}.credit_balances WHERE principal_id = ANY (principals) ORDER BY principal_id FOR UPDATE;
      FOR i IN 1 .. coalesce(array_length(principals, 1), 0) LOOP
        UPDATE ${s}.credit_balances SET balance = balance - amounts[i], updated_at = at
          WHERE principal_id = principals[i] AND balance >= amounts[i];
        IF FOUND THEN
          result := array_append(result, NULL::bigint);
        ELSE
          result := array_append(result, coalesce((SELECT balance FROM ${s}.credit_balances WHERE principal_id = principals[i]), 0));
        END IF;
      END LOOP;
      RETURN result;
    END $$`,
    `CREATE FUNCTION ${s}.credit_refund_v1() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      c record;
      n integer;
    BEGIN
      SELECT principal_id, units, refund_failed INTO c FROM ${s}.credit_charges
        WHERE ref = NEW.ref AND settled_at IS NULL FOR UPDATE;
      IF NOT FOUND THEN RETURN NULL; END IF;
      IF c.refund_failed THEN n := c.units;
      ELSIF OLD.state = 'submitted' THEN n := 0;
      ELSE SELECT count(*) INTO n FROM jsonb_array_elements(NEW.parts) p WHERE p->>0 IS NULL;
      END IF;
      UPDATE ${s}.credit_charges SET refunded = n, settled_at = NEW.updated_at WHERE ref = NEW.ref;
      IF n > 0 THEN
        UPDATE ${s}.credit_balances SET balance = balance + n, updated_at = NEW.updated_at WHERE principal_id = c.principal_id;
      END IF;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER credit_refund AFTER UPDATE OF state ON ${s}.messages FOR EACH ROW
      WHEN (NEW.state <> 'delivered' AND NEW.state NOT IN ('queued', 'submitted', 'scheduled')
        AND OLD.state IN ('queued', 'submitted', 'scheduled'))
      EXECUTE FUNCTION ${s}.credit_refund_v1()`,
    `CREATE FUNCTION ${s}.credit_forget_v1() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM ${s}.credit_charges WHERE ref IN (SELECT ref FROM gone);
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER credit_forget AFTER DELETE ON ${s}.messages REFERENCING OLD TABLE AS gone
      FOR EACH STATEMENT EXECUTE FUNCTION ${s}.credit_forget_v1()`,
  ];
}

/** The ledger's statements in schema `s`. */
export interface CreditSql {
  /** `credit_take_v1($1 principals, $2 units, $3 now)`: per charge, null if taken, else the balance. */
  take: string;
  /** Gives back `$2` units to each principal of `$1` (summed), and writes the charge rows `$3`-`$7`. */
  settle: string;
  /** Adds `$2` units to principal `$1` at `$3`, returning the new balance. */
  topUp: string;
  /** Principal `$1`'s balance. */
  balance: string;
}

/** The ledger's statements in schema `s` (quoted). */
export function creditSql(s: string): CreditSql {
  return {
    take: `SELECT ${s}.credit_take_v1($1::text[], $2::int8[], $3::int8) AS refused`,
    settle: `WITH back AS (
        UPDATE ${s}.credit_balances b SET balance = b.balance + g.units
        FROM (SELECT p, sum(u) AS units FROM unnest($1::text[], $2::int8[]) AS x(p, u) GROUP BY p) g
        WHERE b.principal_id = g.p
      )
      INSERT INTO ${s}.credit_charges (ref, principal_id, units, refund_failed, charged_at)
      SELECT * FROM unnest($3::text[], $4::text[], $5::int4[], $6::bool[], $7::int8[])`,
    topUp: `INSERT INTO ${s}.credit_balances AS b (principal_id, balance, updated_at) VALUES ($1, $2, $3)
      ON CONFLICT (principal_id) DO UPDATE SET balance = b.balance + EXCLUDED.balance, updated_at = EXCLUDED.updated_at
      RETURNING balance`,
    balance: `SELECT balance FROM ${s}.credit_balances WHERE principal_id = $1`,
  };
}

/**
 * Inserts `calls` (some with a charge) in one transaction on a client of `pool`: charges
 * taken, messages of the paid calls inserted by `insert`, charge rows written. Resolves with
 * each call's outcome; a failure rolls all of it back (the batcher then runs each call alone).
 */
export async function insertCharged(
  pool: Pool,
  sql: CreditSql,
  calls: readonly InsertRows[],
  insert: (calls: readonly InsertRows[], db: Queryable) => Promise<boolean[]>,
): Promise<InsertOutcome[]> {
  return transaction(pool, async (db) => {
    const charged = calls.filter((call) => call.credit != null);
    const at = Math.max(...charged.map((call) => call.messages[0]!.createdAt));
    const { rows } = await db.query<{ refused: (string | null)[] }>(sql.take, [
      charged.map((call) => call.credit!.principalId),
      charged.map((call) => call.credit!.units),
      at,
    ]);
    const refused = new Map<InsertRows, InsufficientCreditError>();
    rows[0]!.refused.forEach((balance, i) => {
      const call = charged[i]!;
      if (balance !== null) refused.set(call, new InsufficientCreditError(call.credit!.units, Number(balance)));
    });
    const paid = calls.filter((call) => !refused.has(call));
    const stored = paid.length === 0 ? [] : await insert(paid, db);
    const back: [string[], number[]] = [[], []];
    const charges: unknown[][] = [[], [], [], [], []];
    paid.forEach((call, i) => {
      if (call.credit == null) return;
      if (!stored[i]) {
        back[0].push(call.credit.principalId);
        back[1].push(call.credit.units);
        return;
      }
      const refundFailed = call.credit.refunds === 'unsent-and-failed';
      for (const m of call.messages) [m.ref, m.principalId, m.smsCount, refundFailed, at].forEach((value, c) => charges[c]!.push(value));
    });
    await db.query(sql.settle, [...back, ...charges]);
    return calls.map((call) => refused.get(call) ?? stored[paid.indexOf(call)]!);
  });
}
