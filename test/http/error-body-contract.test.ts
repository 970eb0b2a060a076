/**
 * What a client may rely on in an error body is said the same way in the three places a
 * client reads it: `code` is the stable contract, `details` is for people and its wording
 * may change. README.md, docs/errors.md and the served OpenAPI document must agree.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/index.js';

const read = (path: string): string => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');

/** The text of the `## Errors` section of `markdown`, up to the next section. */
function errorsSection(markdown: string): string {
  const start = markdown.indexOf('\n## Errors\n');
  expect(start, 'README.md has an "## Errors" section').toBeGreaterThan(-1);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end).replace(/\s+/g, ' ');
}

/** Sayings that promise the wording of `details` stays. */
const DETAILS_STABLE = /texts (are|stay) stable|texts do not change|details`? (is|are) (the )?(stable|contract)/i;

describe('the error body contract', () => {
  it('the OpenAPI document: details may change, code is stable', () => {
    const schema = (buildOpenApiDocument() as unknown as { components: { schemas: { Error: { properties: Record<string, { description: string }> } } } })
      .components.schemas.Error.properties;
    expect(schema.details!.description).toMatch(/wording may change/);
    expect(schema.code!.description).toMatch(/^Stable/);
  });

  it('README.md says what the OpenAPI document says', () => {
    const section = errorsSection(read('README.md'));
    expect(section).toMatch(/`details` for people \(its wording may change\)/);
    expect(section).not.toMatch(DETAILS_STABLE);
  });

  it('docs/errors.md says it too', () => {
    const page = read('docs/errors.md').replace(/\s+/g, ' ');
    expect(page).toMatch(/`code` is the contract/);
    expect(page).toMatch(/`details` is for people[^.]*\. Its wording may change/);
    expect(page).not.toMatch(DETAILS_STABLE);
  });
});
