/**
 * Leases, as the storage contract takes them: the lease work is stored under, and the options
 * of a claim. Part of the storage contract (the `Storage` type's module re-exports both, and
 * the package exports them), kept in a file of its own so that the contract's other record
 * files can name them. A lease `(owner, until)` keeps every claim, by anyone, from returning
 * the item until `until`; from `until` on any claim may (its owner crashed).
 *
 * @module
 */

/**
 * A lease taken when work is stored: messages stored `queued`, or a delivery report stored
 * pending (`PartReceipt.reportLease`), leased to `owner` until `until`, exactly as if
 * `owner` had claimed them the moment they were stored. The instance that accepts a request
 * submits its messages itself this way, without a claim (a write and a scan per poll on SQL
 * storage) in between; should it stop, the lease ends and any instance claims them.
 */
export interface InsertLease {
  /** The lease owner (the accepting instance's worker). */
  owner: string;
  /** When the lease ends, epoch ms. */
  until: number;
}

/** Options of a claim: who claims, how many, for how long. */
export interface ClaimOptions {
  /** The claimer's id (one per worker instance). */
  owner: string;
  /** At most this many. */
  limit: number;
  /** How long the claim holds (ms) before another owner may take the work. */
  leaseMs: number;
  /** The current time, epoch ms (injected, so tests control time). */
  now: number;
}
