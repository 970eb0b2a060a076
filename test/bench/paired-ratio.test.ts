/**
 * The benchmark report compares a case with its baseline round by round, so that a machine
 * that drifts between rounds does not decide a target's verdict.
 */
import { describe, expect, it } from 'vitest';
import { caseRatio, resultsTable, type CaseResult } from '../../bench/report.js';
import { pairedRatio, spread } from '../../bench/stats.js';

/** An HTTP case with these req/s per round (p99 10 ms each), medians as the harness sets them. */
function httpCase(name: string, perRound: (number | null)[], baseline?: string): CaseResult {
  const ran = perRound.filter((v): v is number => v !== null);
  return {
    name,
    title: name,
    notes: [],
    ...(baseline === undefined ? {} : { baseline }),
    rounds: perRound.map((v) => (v === null ? null : { requestsPerSec: v, p99Ms: 10 })),
    requestsPerSec: spread(ran),
    p99Ms: spread(ran.map(() => 10)),
  };
}

describe('pairedRatio', () => {
  it('takes the median and range of the ratios of each round, skipping rounds either case missed', () => {
    expect(pairedRatio([90, 200, 50, 7], [100, 200, 100, null])).toEqual({ median: 0.9, min: 0.5, max: 1, runs: 3 });
    expect(pairedRatio([1, 2], [null, 0])).toBeNull();
  });
});

describe('caseRatio', () => {
  const baseline = httpCase('baseline-1', [3_000, 2_400, 2_700]);
  const steady = httpCase('memory-1', [2_700, 2_160, 2_430], 'baseline-1');

  it('pairs each round\'s run with the baseline\'s run of that round', () => {
    expect(caseRatio(steady, baseline, 'requestsPerSec')).toEqual({ median: 0.9, min: 0.9, max: 0.9, runs: 3 });
    // memory-1 and baseline-1 of a full run on a noisy machine.
    // Its medians give 0.85x; the rounds give 1.06x, 0.83x and 0.96x, and the report shows all three.
    const measured = caseRatio(httpCase('memory-1', [3_080, 2_252, 2_291], 'baseline-1'), httpCase('baseline-1', [2_898, 2_709, 2_395]), 'requestsPerSec')!;
    expect(measured.median).toBeCloseTo(0.957, 3);
    expect([measured.min, measured.max].map((v) => Number(v.toFixed(2)))).toEqual([0.83, 1.06]);
  });

  it('leaves out a round the case did not run in', () => {
    const partial = httpCase('sqlite-1', [1_500, null, 1_350], 'baseline-1');
    expect(caseRatio(partial, baseline, 'requestsPerSec')).toEqual({ median: 0.5, min: 0.5, max: 0.5, runs: 2 });
  });

  it('falls back to the ratio of the medians for cases not run in rounds, and is null without a baseline', () => {
    const { rounds: _omitted, ...unrounded } = steady;
    expect(caseRatio(unrounded, baseline, 'requestsPerSec')).toEqual({ median: 0.9, min: 0.9, max: 0.9, runs: 1 });
    expect(caseRatio(steady, undefined, 'requestsPerSec')).toBeNull();
  });

  it('fills the table\'s ratio columns with the median and range by round', () => {
    const table = resultsTable([baseline, httpCase('sqlite-1', [1_650, 1_560, 1_620], 'baseline-1')]);
    const row = table.split('\n').find((line) => line.startsWith('| sqlite-1 '))!;
    expect(row).toContain('| 0.60x [0.55x-0.65x] | 1.00x |');
  });
});
