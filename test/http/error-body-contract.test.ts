/**
 * What a client may rely on in an error body is said the same way in the three places a
 * client reads it: `details` is the contract clients read (the product contract says so:
 * clients of the original service read the body as `{ details }`), its texts stable; `code`
 * is a stable name beside it. README.md, docs/errors.md and the served OpenAPI document agree.
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

/** Sayings that let the wording of `details` change at will. */
const DETAILS_MAY_CHANGE = /wording may change|may change in any release|never matches on it/i;

describe('the error body contract', () => {
  it('the OpenAPI document: details is the contract, its texts stable; code is stable', () => {
    const schema = (buildOpenApiDocument() as unknown as { components: { schemas: { Error: { properties: Record<string, { description: string }> } } } })
      .components.schemas.Error.properties;
    expect(schema.details!.description).toMatch(/the contract clients read\. Its texts are stable/);
    expect(schema.details!.description).not.toMatch(DETAILS_MAY_CHANGE);
    expect(schema.code!.description).toMatch(/^Stable/);
  });

  it('README.md says what the OpenAPI document says', () => {
    const section = errorsSection(read('README.md'));
    expect(section).toMatch(/`details` \(stable texts: the contract clients read\)/);
    expect(section).not.toMatch(DETAILS_MAY_CHANGE);
  });

  it('docs/errors.md says it too', () => {
    const page = read('docs/errors.md').replace(/\s+/g, ' ');
    expect(page).toMatch(/`details` is the contract clients read/);
    expect(page).toMatch(/its texts are stable: one changes only in a major release/);
    expect(page).not.toMatch(DETAILS_MAY_CHANGE);
  });
});
