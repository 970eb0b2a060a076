/**
 * Which format each principal's delivery reports go out in (`Principal.reportFormat`), and
 * where they fail over to (`Principal.callbackFailoverUrl`), found when a report is built, by the principal id its message keeps: a report is sent
 * long after its request, by whichever instance claims it.
 *
 * With a `staticKeys` table the router reads the format from that table, which every
 * instance holds from its start. With the host's own key verifier the only source is the
 * principals that verifier returns, so the router notes the format of each one it sees;
 * an instance that has not seen a principal since it started sends the envelope.
 */
import type { ReportFormat, ReportFormatOf } from '../dlr/payload.js';
import { isPromiseLike } from '../util/settle.js';
import { keyTableOf } from './owner-tables.js';
import type { KeyVerifier, Principal } from './principal.js';

/** The report formats of a router's principals (see the module comment). */
export class ReportFormats {
  readonly #table: ReadonlyMap<string, Principal> | undefined;
  /** The principals seen with a format other than the default (the host's verifier only). */
  readonly #seen = new Map<string, ReportFormat>();
  /** The principals seen with a failover URL (the host's verifier only). */
  readonly #failover = new Map<string, string>();

  /** Reads the formats from `verifyKey`'s table when it is a `staticKeys` verifier. */
  constructor(verifyKey: KeyVerifier) {
    this.#table = keyTableOf(verifyKey);
  }

  /** The format of the principal of id `principalId`; `envelope` when not known. */
  readonly of: ReportFormatOf = (principalId) =>
    this.#table?.get(principalId)?.reportFormat ?? this.#seen.get(principalId) ?? 'envelope';

  /** The failover URL of the principal of id `principalId`, or `null`. */
  readonly failoverOf = (principalId: string): string | null =>
    this.#table?.get(principalId)?.callbackFailoverUrl ?? this.#failover.get(principalId) ?? null;

  /**
   * `verifyKey`, noting the format of each principal it returns; `verifyKey` itself for a
   * `staticKeys` verifier, whose table already has them.
   */
  watching(verifyKey: KeyVerifier): KeyVerifier {
    if (this.#table !== undefined) return verifyKey;
    return (apiKey) => {
      const found = verifyKey(apiKey);
      if (!isPromiseLike(found)) {
        this.#note(found);
        return found;
      }
      return Promise.resolve(found).then((principal) => {
        this.#note(principal);
        return principal;
      });
    };
  }

  /** Notes `principal`'s format; anything that is not a principal is the key check's to refuse. */
  #note(principal: Principal | null): void {
    if (typeof principal !== 'object' || principal === null || typeof principal.id !== 'string') return;
    if (principal.reportFormat === 'flat') this.#seen.set(principal.id, 'flat');
    else this.#seen.delete(principal.id);
    if (typeof principal.callbackFailoverUrl === 'string') this.#failover.set(principal.id, principal.callbackFailoverUrl);
    else this.#failover.delete(principal.id);
  }
}
