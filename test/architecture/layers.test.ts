/**
 * The shape of the house, kept so: no module imports from a layer above its own and no
 * imports close a circle (the rules are in .dependency-cruiser.cjs), and no file under
 * src/ grows past 400 lines.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const MAX_LINES = 400;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the layers of src/', () => {
  it('import only their own layer and those below, in no circle', { timeout: 60_000 }, async () => {
    const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as { forbidden: unknown; options: object };
    const previous = process.cwd();
    process.chdir(root);
    let result: ICruiseResult;
    try {
      ({ output: result } = (await cruise(['src'], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } } as never)) as {
        output: ICruiseResult;
      });
    } finally {
      process.chdir(previous);
    }
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
    expect(violations).toEqual([]);
    // The rules saw the whole tree, not an empty one.
    expect(result.modules.filter((m) => m.source.startsWith('src/')).length).toBeGreaterThan(100);
  });

  it('keep the inbound feature in src/inbound/, its storage in the storage\'s room', () => {
    // The storage keeps inbound messages and the opt-out list for every adapter (its own
    // room, and the contract suite's), the ledger's inbound steps keep the webhook's rules
    // over any store, and the router resolves every option section.
    const elsewhere = filesUnder(join(root, 'src'))
      .map((path) => relative(root, path).split('\\').join('/'))
      .filter((path) => /inbound|opt-out/.test(path))
      .filter((path) => !/^src\/(inbound|storage|testing\/storage-suite)\/|^src\/router\/config-|^src\/ledger\/inbound-steps\.ts$/.test(path));
    expect(elsewhere).toEqual([]);
  });

  it(`keep every file under ${MAX_LINES} lines`, () => {
    const long = filesUnder(join(root, 'src'))
      .map((path) => ({ path: relative(root, path), lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ path, lines }) => `${path}: ${lines}`);
    expect(long).toEqual([]);
  });
});
