/**
 * The traffic of a recent window in fixed steps (the hour by the minute, the day by the
 * quarter hour): per step, messages accepted, submitted, delivered and failed, credit units
 * spent, and the accept-to-submit and submit-to-final latencies as {@link LatencySketch}es.
 * A step is kept only while it is inside the window, so the memory is bounded by the
 * number of steps whatever the traffic.
 */
import { LatencySketch } from './latency-sketch.js';

/** A counted series. */
export type Series = 'accepted' | 'submitted' | 'delivered' | 'failed' | 'creditSpent';
/** The counted series, in the order the charts draw them. */
const SERIES: readonly Series[] = ['accepted', 'submitted', 'delivered', 'failed', 'creditSpent'];
/** A measured latency: from acceptance (or the due time) to the first part's submission; from there to the final state. */
export type Leg = 'acceptToSubmit' | 'submitToFinal';

/** One step's counts and latencies. */
interface Step {
  counts: Record<Series, number>;
  latency: Record<Leg, LatencySketch>;
}

/** p50 and p95 per step, seconds; `null` for a step without a latency. */
export interface Percentiles {
  p50: (number | null)[];
  p95: (number | null)[];
  /** The whole window's, seconds (`null` without a latency), and how many latencies it counts. */
  all: { p50: number | null; p95: number | null; samples: number };
}

/** A window as the charts read it, oldest step first. */
export type WindowSnapshot = Record<Series, number[]> & {
  /** The start of each step, epoch seconds (what uPlot's time axis reads). */
  starts: number[];
  /** The step, seconds. */
  stepS: number;
  acceptToSubmit: Percentiles;
  submitToFinal: Percentiles;
};

/** Milliseconds as seconds, to the millisecond. */
function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms) / 1000;
}

/** The last `steps` steps of `stepMs` each, counted as things happen. */
export class TrafficWindow {
  readonly #steps = new Map<number, Step>();

  constructor(
    private readonly stepMs: number,
    private readonly steps: number,
  ) {}

  #at(now: number): Step {
    const index = Math.floor(now / this.stepMs);
    let step = this.#steps.get(index);
    if (step === undefined) {
      this.#prune(index);
      step = {
        counts: { accepted: 0, submitted: 0, delivered: 0, failed: 0, creditSpent: 0 },
        latency: { acceptToSubmit: new LatencySketch(), submitToFinal: new LatencySketch() },
      };
      this.#steps.set(index, step);
    }
    return step;
  }

  #prune(current: number): void {
    for (const index of this.#steps.keys()) if (index <= current - this.steps) this.#steps.delete(index);
  }

  /** Adds `n` to `series` in the step of `now`. */
  add(series: Series, n: number, now: number): void {
    this.#at(now).counts[series] += n;
  }

  /** Counts a latency of `ms` on `leg` in the step of `now` (when it ended). */
  latency(leg: Leg, ms: number, now: number): void {
    this.#at(now).latency[leg].add(ms);
  }

  /** The window ending with the step of `now`. */
  snapshot(now: number): WindowSnapshot {
    const current = Math.floor(now / this.stepMs);
    this.#prune(current);
    const window: WindowSnapshot = {
      starts: [], stepS: this.stepMs / 1000, accepted: [], submitted: [], delivered: [], failed: [], creditSpent: [],
      acceptToSubmit: { p50: [], p95: [], all: { p50: null, p95: null, samples: 0 } },
      submitToFinal: { p50: [], p95: [], all: { p50: null, p95: null, samples: 0 } },
    };
    const whole = { acceptToSubmit: new LatencySketch(), submitToFinal: new LatencySketch() };
    for (let index = current - this.steps + 1; index <= current; index += 1) {
      const step = this.#steps.get(index);
      window.starts.push((index * this.stepMs) / 1000);
      for (const series of SERIES) window[series].push(step?.counts[series] ?? 0);
      for (const leg of ['acceptToSubmit', 'submitToFinal'] as const) {
        const sketch = step?.latency[leg];
        window[leg].p50.push(seconds(sketch?.quantile(0.5) ?? null));
        window[leg].p95.push(seconds(sketch?.quantile(0.95) ?? null));
        if (sketch !== undefined) whole[leg].merge(sketch);
      }
    }
    for (const leg of ['acceptToSubmit', 'submitToFinal'] as const) {
      window[leg].all = { p50: seconds(whole[leg].quantile(0.5)), p95: seconds(whole[leg].quantile(0.95)), samples: whole[leg].count };
    }
    return window;
  }
}
