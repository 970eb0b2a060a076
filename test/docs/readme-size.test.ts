/**
 * README is the user's one page: at most 20 KB, with depth in docs/. A paragraph added there
 * has to take the place of another, or move to a page of docs/.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('README.md', () => {
  it('stays within 20,000 bytes', () => {
    const bytes = readFileSync(new URL('../../README.md', import.meta.url)).length;
    expect(bytes, `README.md is ${bytes} bytes; move depth to docs/`).toBeLessThanOrEqual(20_000);
  });
});
