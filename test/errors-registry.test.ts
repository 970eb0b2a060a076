import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/index.js';

describe('the error registry', () => {
  it('is documented in the README table, code by code, with its status and details', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = new Map<string, { status: number; text: string }>();
    for (const match of readme.matchAll(/^\| (\d{3}) \| `([A-Z_]+)` \| (.*) \|$/gm)) {
      rows.set(match[2]!, { status: Number(match[1]), text: match[3]! });
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
    for (const [code, entry] of Object.entries(ERRORS)) {
      const row = rows.get(code)!;
      expect(row.status, code).toBe(entry.status);
      // Fixed texts are quoted verbatim; dynamic ones (validation, sizes) are described.
      if (!['VALIDATION_FAILED', 'BODY_TOO_LARGE', 'SCOPE_DENIED', 'RATE_LIMITED', 'SERVER_ERROR'].includes(code)) {
        expect(row.text, code).toContain(`\`${entry.details}\``);
      }
    }
  });
});
