/**
 * The payload of the spend-cap event (`spend_cap.warning`; docs/keys.md#spend-caps), kept
 * beside events.ts, which maps the name to it.
 *
 * @module
 */

/**
 * Payload of `spend_cap.warning`: a request took a principal's units of a day or a month to
 * 80% of its cap (`dailyUnits`, `monthlyUnits`) or past it. Once per principal and period
 * across the instances sharing the storage: by the request whose units crossed the mark,
 * as the storage counted them.
 */
export interface SpendCapWarningEvent {
  /** The principal. */
  principalId: string;
  /** Which cap: `day` (`dailyUnits`) or `month` (`monthlyUnits`). */
  period: 'day' | 'month';
  /** The units stored in the period, this request's included. */
  units: number;
  /** The cap. */
  limit: number;
  /** When the period ends and its count starts again from 0, epoch ms. */
  resetsAt: number;
}
