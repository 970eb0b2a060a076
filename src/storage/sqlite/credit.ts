/**
 * The SQLite storage's credit ledger (storage/credit-record.ts): the statements over the
 * tables of migration 8, and the charge of a request, run inside the write that stores its
 * messages. Refunds are the migration's trigger, not code here: they happen in whichever step
 * ends a message.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { type CreditCharge, type CreditStorage } from '../credit-record.js';
import { InsufficientCreditError } from '../../lifecycle/credit.js';
import type { NewMessage } from '../contract.js';
import type { GroupCommit } from './group-commit.js';

/** The ledger's prepared statements. */
export interface CreditStatements {
  /** Takes `$1` units from principal `$3` at `$2` if its balance holds them. */
  take: Database.Statement<[number, number, string, number]>;
  /** Writes one message's charge: ref, principal, units, refund of failed (0/1), charged at. */
  charge: Database.Statement<[string, string, number, number, number]>;
  /** Adds `$2` units to principal `$1` at `$3`; returns the new balance. */
  topUp: Database.Statement<[string, number, number], { balance: number }>;
  /** Principal `$1`'s balance row. */
  balance: Database.Statement<[string], { balance: number }>;
}

/** Prepares the ledger's statements on `db` (its schema migrated). */
export function prepareCredit(db: Database.Database): CreditStatements {
  return {
    take: db.prepare('UPDATE sms_credit_balances SET balance = balance - ?, updated_at = ? WHERE principal_id = ? AND balance >= ?'),
    charge: db.prepare('INSERT INTO sms_credit_charges (ref, principal_id, units, refund_failed, charged_at) VALUES (?, ?, ?, ?, ?)'),
    topUp: db.prepare(`INSERT INTO sms_credit_balances (principal_id, balance, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (principal_id) DO UPDATE SET balance = balance + excluded.balance, updated_at = excluded.updated_at
      RETURNING balance`),
    balance: db.prepare('SELECT balance FROM sms_credit_balances WHERE principal_id = ?'),
  };
}

/**
 * Takes `charge` for `messages` at `now`, inside the caller's write (so with the messages or
 * not at all), or throws {@link InsufficientCreditError} having written nothing.
 */
export function takeCharge(c: CreditStatements, charge: CreditCharge, messages: readonly NewMessage[], now: number): void {
  if (c.take.run(charge.units, now, charge.principalId, charge.units).changes === 0) {
    throw new InsufficientCreditError(charge.units, c.balance.get(charge.principalId)?.balance ?? 0);
  }
  const refundFailed = charge.refunds === 'unsent-and-failed' ? 1 : 0;
  for (const m of messages) c.charge.run(m.ref, m.principalId, m.smsCount, refundFailed, now);
}

/**
 * The ledger's methods of the storage (`topUpCredit`, `creditBalance`), over the statements
 * `ready` resolves with once the schema is migrated; a top-up shares the group's commit.
 */
export function sqliteLedger(ready: () => Promise<CreditStatements>, commits: GroupCommit): Required<CreditStorage> {
  return {
    topUpCredit: async (principalId, units, now) => {
      const c = await ready();
      return commits.run(() => c.topUp.get(principalId, units, now)!.balance);
    },
    creditBalance: async (principalId) => (await ready()).balance.get(principalId)?.balance ?? 0,
  };
}
