/**
 * BENCHMARKS.md is the report of the latest full run and its method, nothing more: the
 * generator writes the same sections every time, takes the method from bench/method.md,
 * and replaces the file rather than carrying anything of an earlier one forward.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { publish, readMethod, renderReport, type RunReport } from '../../bench/report.js';
import { spread } from '../../bench/stats.js';

const run: RunReport = {
  command: 'npm run bench',
  startedAt: '2030-01-01T00:00:00.000Z',
  totalSec: 480,
  machine: ['CPU: Test CPU, 2 cores', 'memory: 4.0 GiB (3.0 GiB free at start)', 'Node v20.0.0, linux x64'],
  setup: ['servers pinned to core 0'],
  cases: [
    { name: 'baseline-1', title: 'bare Express', notes: [], requestsPerSec: spread([1_000]) },
    { name: 'memory-1', title: 'quick send, memory', notes: [], requestsPerSec: spread([950]), baseline: 'baseline-1' },
  ],
  targets: [{ target: 'memory-1 >= 0.9x', measured: '0.95x', verdict: 'met' }],
  limits: ['memory-1: the request path and the worker on one core.'],
};

const headings = (markdown: string) => markdown.split('\n').filter((line) => /^#{1,3} /.test(line));

describe('the benchmark report', () => {
  let dir: string | null = null;
  afterEach(() => {
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
    dir = null;
    vi.restoreAllMocks();
  });

  it('names the machine in its header, then results, targets, cases, bounds, method and this run', () => {
    const markdown = renderReport(run, '## Method\n\nHow it is measured.');
    expect(markdown.split('\n')[2]).toContain('on Test CPU, 2 cores, Node v20.0.0');
    expect(headings(markdown)).toEqual([
      '# Benchmarks',
      '## Results',
      '## Targets',
      '## Cases',
      '## What bounds each figure',
      '## Method',
      '## This run',
    ]);
    expect(markdown).toContain('| memory-1 | 950 |');
    expect(markdown).toContain('| memory-1 >= 0.9x | 0.95x | **met** |');
  });

  it('takes its method from bench/method.md, which tells no story of past runs', () => {
    const method = readMethod();
    expect(headings(method)[0]).toBe('## Method');
    expect(renderReport(run)).toContain(method);
    expect(method).not.toMatch(/session|\b20\d\d-\d\d-\d\d\b/i);
  });

  it('replaces the file it writes: nothing of an earlier report is kept', () => {
    dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
    const path = join(dir, 'BENCHMARKS.md');
    writeFileSync(path, '# Benchmarks\n\n## Changes since the first figures\n\n### A journal entry\n');
    vi.spyOn(process.stdout, 'write').mockReturnValue(true);
    publish(run, path);
    const written = readFileSync(path, 'utf8');
    expect(written).toBe(renderReport(run));
    expect(written).not.toContain('journal');
  });

  it('is what BENCHMARKS.md holds: the current run and the method, no journal of earlier runs', () => {
    const file = readFileSync(new URL('../../BENCHMARKS.md', import.meta.url), 'utf8');
    expect(headings(file)).toEqual(['# Benchmarks', ...headings(renderReport(run)).slice(1, 5), ...headings(readMethod()), '## This run']);
    expect(file).toContain(readMethod());
    // The header's run timestamp is the one date the report carries.
    const body = file.split('\n').slice(3).join('\n');
    expect(body).not.toMatch(/session|\b20\d\d-\d\d-\d\d\b/i);
  });
});
