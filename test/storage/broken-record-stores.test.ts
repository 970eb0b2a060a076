/**
 * The record-store contract suite fails broken record stores, each for the rule it breaks.
 * Each case wraps the reference store (NaiveRecordStore) into a store with one known fault,
 * runs the whole suite against it through a collecting describe/it shim (so its failures
 * are captured, not reported), and asserts which cases failed and what they said.
 */
import { describe, expect, it } from 'vitest';
import type { ClaimOptions } from '../../src/storage/claim-options.js';
import type { InsertGuard, MessageRow, MessageWrite, RecordStore, Timer } from '../../src/storage/record-store.js';
import { runRecordStoreContract } from '../../src/testing.js';
import { mulberry32 } from '../../src/util/mulberry32.js';
import { NaiveRecordStore } from '../helpers/naive-record-store.js';
import { runCollected, wrap, type SuiteRun } from '../helpers/suite-run.js';

const PREFIX = 'record store contract: under test > ';

/** Runs the whole record-store suite against the stores `create` makes, through a collecting shim. */
function runSuite(create: () => RecordStore, sharesRows = false): Promise<SuiteRun> {
  return runCollected(
    (harness) => runRecordStoreContract(harness, { name: 'under test', create: async () => create(), sharesRows, throughLedger: false }),
    { prefix: PREFIX },
  );
}

/** The names of the failed cases, without the suite's prefix. */
const names = (run: SuiteRun) => run.failed.map((f) => f.name);

/** `row` with its record's ref replaced. */
const withRef = (row: MessageRow, ref: string): MessageRow => ({ ...row, record: { ...row.record, ref } });

describe('the record-store contract suite', () => {
  it('passes the reference store run through the same shim (the control)', async () => {
    const run = await runSuite(() => new NaiveRecordStore());
    expect(run.ran).toBeGreaterThan(40);
    expect(run.failed).toEqual([]);
  });

  it('fails a store that ignores case in refs (a case-insensitive collation)', async () => {
    const run = await runSuite(() => {
      const inner = new NaiveRecordStore();
      const refs = new Map<string, string>();
      const fold = (ref: string) => ref.toLowerCase();
      const stored = (ref: string) => refs.get(fold(ref)) ?? ref;
      return wrap(inner, {
        insertMessages: async (rows: readonly MessageRow[], guard?: InsertGuard) => {
          for (const row of rows) if (refs.has(fold(row.record.ref))) throw new Error(`Duplicate entry '${row.record.ref}' for key 'PRIMARY'`);
          const refusal = await inner.insertMessages(rows, guard);
          if (refusal === undefined) for (const row of rows) refs.set(fold(row.record.ref), row.record.ref);
          return refusal;
        },
        getMessage: (ref: string) => inner.getMessage(stored(ref)),
        writeMessages: (writes: readonly MessageWrite[]) => inner.writeMessages(writes.map((w) => ({ ...w, row: withRef(w.row, stored(w.row.record.ref)) }))),
        deleteMessages: async (list: readonly string[]) => {
          const deleted = await inner.deleteMessages(list.map(stored));
          for (const ref of list) refs.delete(fold(ref));
          return deleted;
        },
      });
    });
    expect(names(run)).toContain('keys are case-sensitive > refs that differ only in case are two rows, each found, written and deleted by its own spelling only');
    // Every case it fails says the rule on case.
    expect(run.failed.filter((f) => !f.message.includes('case-sensitive'))).toEqual([]);
  });

  it('fails a store whose write ignores the version (no compare-and-set)', async () => {
    const run = await runSuite(() => {
      const inner = new NaiveRecordStore();
      return wrap(inner, {
        writeMessages: async (writes: readonly MessageWrite[]) => {
          const applied: boolean[] = [];
          for (const write of writes) {
            // Overwrites whatever version is stored now (an UPDATE without the version in its WHERE).
            let done = false;
            for (let current = await inner.getMessage(write.row.record.ref); current !== null && !done; current = await inner.getMessage(write.row.record.ref)) {
              done = (await inner.writeMessages([{ ...write, expectedVersion: current.version }]))[0] === true;
            }
            applied.push(done);
          }
          return applied;
        },
      });
    });
    expect(names(run)).toContain('writeMessages > applies a write at the stored version, and refuses one at any other');
    expect(names(run)).toContain('writeMessages > of writes racing at one version exactly one is applied, with its refund (50 rounds of 2 to 4 writers)');
    expect(run.failed.filter((f) => !f.name.startsWith('writeMessages > '))).toEqual([]);
  });

  it('fails a store whose claims under contention now and then return nothing while rows are free', async () => {
    const run = await runSuite(() => {
      const inner = new NaiveRecordStore();
      // Seeded: the same claims come back empty on every run. One claim in 8 that meets another
      // in flight finds every row locked and gives up, as a SKIP LOCKED scan that stops early does.
      const random = mulberry32(8);
      let inFlight = 0;
      return wrap(inner, {
        claimMessages: async (options: ClaimOptions) => {
          inFlight++;
          try {
            if (inFlight > 1 && random() < 1 / 8) return [];
            return await inner.claimMessages(options);
          } finally {
            inFlight--;
          }
        },
      });
    });
    expect(names(run)).toEqual(['claimMessages > claims at once get disjoint sets that cover every free row (50 rounds of 2 to 4 claims over 50 rows)']);
    expect(run.failed[0]!.message).toContain('a claim must not come back short while rows are free');
  });

  it('fails a store whose credit take reads the balance and writes it back in two steps', async () => {
    const run = await runSuite(() => {
      const inner = new NaiveRecordStore();
      // The balances kept apart from the rows, as a table outside the insert's transaction would be.
      const balances = new Map<string, number>();
      const add = (principalId: string, units: number) => {
        balances.set(principalId, (balances.get(principalId) ?? 0) + units);
        return balances.get(principalId)!;
      };
      return wrap(inner, {
        addCredit: async (principalId: string, units: number) => add(principalId, units),
        creditBalance: async (principalId: string) => balances.get(principalId) ?? 0,
        insertMessages: async (rows: readonly MessageRow[], guard?: InsertGuard) => {
          if (guard?.credit === undefined) return inner.insertMessages(rows, guard);
          const { principalId, units } = guard.credit;
          const balance = balances.get(principalId) ?? 0;
          if (balance < units) return { refused: 'insufficient-credit', balance };
          const refusal = await inner.insertMessages(rows, guard.idempotency === undefined ? undefined : { idempotency: guard.idempotency });
          // Written back from what was read before the insert's round trip.
          if (refusal === undefined) balances.set(principalId, balance - units);
          return refusal;
        },
        writeMessages: async (writes: readonly MessageWrite[]) => {
          const applied = await inner.writeMessages(writes.map(({ refund: _refund, ...write }) => write));
          writes.forEach((write, i) => applied[i] && write.refund !== undefined && add(write.row.record.principalId, write.refund));
          return applied;
        },
      });
    });
    expect(names(run)).toEqual(['credit > 20 charges racing for a balance never spend more than it (50 rounds)']);
    expect(run.failed[0]!.message).toContain('the balance check, the take and the insert are one atomic step');
  });

  it('fails a store that finds rows only by the carrier ids they were inserted with', async () => {
    const run = await runSuite(() => {
      const inner = new NaiveRecordStore();
      // A carrier id table filled on insert only: the ids a write adds never reach it.
      const index = new Map<string, string>();
      return wrap(inner, {
        insertMessages: async (rows: readonly MessageRow[], guard?: InsertGuard) => {
          const refusal = await inner.insertMessages(rows, guard);
          if (refusal === undefined) for (const row of rows) for (const id of row.carrierIds) index.set(id, row.record.ref);
          return refusal;
        },
        findByCarrierId: async (ids: readonly string[]) => {
          for (const id of ids) {
            const ref = index.get(id);
            const row = ref === undefined ? null : await inner.getMessage(ref);
            if (row !== null) return row;
          }
          return null;
        },
      });
    });
    expect(names(run)).toEqual([
      'findByCarrierId > finds a row by the carrier ids a later write added, and still by the earlier ones',
      'findByCarrierId > finds the row given a reused id last, whatever is later written to or deleted from the other',
    ]);
    expect(run.failed[0]!.message).toContain('the carrier ids a write adds to a row are found by findByCarrierId');
    expect(run.failed[1]!.message).toContain('when a carrier reuses an id, findByCarrierId finds the row given it last');
  });

  it('fails a store whose claim ignores validUntil', async () => {
    const run = await runSuite(() => {
      const inner = new NaiveRecordStore();
      // validUntil kept beside the rows, out of the claim's sight.
      const validity = new Map<string, number | null | undefined>();
      const hide = (row: MessageRow): MessageRow => ({ ...row, record: { ...row.record, validUntil: null } });
      const show = (row: MessageRow): MessageRow => ({ ...row, record: { ...row.record, validUntil: validity.get(row.record.ref) ?? null } });
      const showAll = (rows: MessageRow[]) => rows.map(show);
      return wrap(inner, {
        insertMessages: async (rows: readonly MessageRow[], guard?: InsertGuard) => {
          const refusal = await inner.insertMessages(rows.map(hide), guard);
          if (refusal === undefined) for (const row of rows) validity.set(row.record.ref, row.record.validUntil);
          return refusal;
        },
        writeMessages: async (writes: readonly MessageWrite[]) => {
          const applied = await inner.writeMessages(writes.map((write) => ({ ...write, row: hide(write.row) })));
          writes.forEach((write, i) => applied[i] && validity.set(write.row.record.ref, write.row.record.validUntil));
          return applied;
        },
        getMessage: async (ref: string) => {
          const row = await inner.getMessage(ref);
          return row === null ? null : show(row);
        },
        findByExternalId: async (principalId: string, externalId: string, limit: number) => showAll(await inner.findByExternalId(principalId, externalId, limit)),
        findByCarrierId: async (ids: readonly string[]) => {
          const row = await inner.findByCarrierId(ids);
          return row === null ? null : show(row);
        },
        claimMessages: async (options: ClaimOptions) => showAll(await inner.claimMessages(options)),
        claimReports: async (options: ClaimOptions) => showAll(await inner.claimReports(options)),
        dueMessages: async (timer: Timer, at: number, limit: number) => showAll(await inner.dueMessages(timer, at, limit)),
      });
    });
    expect(names(run)).toContain('claimMessages > takes only rows in the submit queue, due, free of a live lease and still valid');
    expect(run.failed.find((f) => f.name.startsWith('claimMessages > '))!.message).toContain('a row valid until exactly now was claimed');
    // Its only other fault: the queue's head, which counts only rows a claim could take, counts them too.
    expect(run.failed.filter((f) => !f.name.startsWith('claimMessages > ') && !f.name.startsWith('queueEnds > '))).toEqual([]);
  });

  it('fails a store that hands the caller the rows it keeps, unless it declares sharesRows', async () => {
    const create = () => {
      const inner = new NaiveRecordStore();
      // A cache of the rows read, handed out as they are, as a store keeping live objects would.
      const cache = new Map<string, MessageRow>();
      const forget = (refs: readonly string[]) => refs.forEach((ref) => cache.delete(ref));
      return wrap(inner, {
        getMessage: async (ref: string) => {
          const cached = cache.get(ref);
          if (cached !== undefined) return cached;
          const row = await inner.getMessage(ref);
          if (row !== null) cache.set(ref, row);
          return row;
        },
        writeMessages: async (writes: readonly MessageWrite[]) => {
          forget(writes.map((w) => w.row.record.ref));
          return inner.writeMessages(writes);
        },
        claimMessages: async (options: ClaimOptions) => {
          const rows = await inner.claimMessages(options);
          forget(rows.map((r) => r.record.ref));
          return rows;
        },
        claimReports: async (options: ClaimOptions) => {
          const rows = await inner.claimReports(options);
          forget(rows.map((r) => r.record.ref));
          return rows;
        },
        deleteMessages: async (refs: readonly string[]) => {
          forget(refs);
          return inner.deleteMessages(refs);
        },
      });
    };
    const run = await runSuite(create);
    expect(names(run)).toContain('rows belong to the caller > changing a row a read or a claim returned changes nothing stored');
    expect(run.failed.every((f) => f.message.includes('rows handed to a store or returned by it belong to the caller'))).toBe(true);
    expect((await runSuite(create, true)).failed).toEqual([]);
  });

  it('fails a store that changes a row it handed out, even when it declares sharesRows', async () => {
    const run = await runSuite(() => {
      const inner = new NaiveRecordStore();
      // The row objects handed out stay live: a claim updates them in place.
      const live = new Map<string, MessageRow>();
      return wrap(inner, {
        getMessage: async (ref: string) => {
          const row = live.get(ref) ?? (await inner.getMessage(ref));
          if (row !== null) live.set(ref, row);
          return row;
        },
        writeMessages: async (writes: readonly MessageWrite[]) => {
          writes.forEach((w) => live.delete(w.row.record.ref));
          return inner.writeMessages(writes);
        },
        claimMessages: async (options: ClaimOptions) =>
          (await inner.claimMessages(options)).map((row) => {
            const held = live.get(row.record.ref);
            return held === undefined ? row : Object.assign(held, row);
          }),
        claimReports: async (options: ClaimOptions) => {
          const rows = await inner.claimReports(options);
          rows.forEach((row) => live.delete(row.record.ref));
          return rows;
        },
        deleteMessages: async (refs: readonly string[]) => {
          refs.forEach((ref) => live.delete(ref));
          return inner.deleteMessages(refs);
        },
      });
    }, true);
    expect(names(run)).toContain('rows belong to the caller > the store changes no row it was given or handed out: inserts, writes and claims store new rows');
    expect(run.failed.find((f) => f.message.includes('a claim changed the row getMessage returned before it'))).toBeDefined();
  });
});
