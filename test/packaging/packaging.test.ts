/**
 * The packed package, as a user gets it: `npm run build`, `npm pack`, the tarball linted
 * (publint, Are the Types Wrong) and unpacked into scratch projects in the OS temp dir, then
 * imported from ESM, CommonJS and TypeScript (node16 and bundler resolution), and served
 * from an Express 5 host and an Express 4 host. No network: the tarball is unpacked as npm
 * would install it, and its dependencies are links into this repo's node_modules (Express 4
 * and its types are there under the aliases `express4` and `types-express4`).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');
const REPO_MODULES = join(REPO, 'node_modules');
const TSC = join(REPO_MODULES, '.bin', 'tsc');
const PUBLINT = join(REPO_MODULES, '.bin', 'publint');
const ATTW = join(REPO_MODULES, '.bin', 'attw');
// semver as Are the Types Wrong resolves it: a dependency of a declared dev dependency.
const semver = createRequire(join(REPO_MODULES, '@arethetypeswrong', 'cli', 'package.json'))('semver') as {
  satisfies(version: string, range: string): boolean;
};
const SUBPATHS = ['sqlite', 'postgres', 'mysql', 'smpp', 'testing', 'dashboard'] as const;
const OPTIONAL_PEERS = ['better-sqlite3', 'pg', 'mysql2', 'smpp', 'prom-client', '@opentelemetry/api'];

let scratch: string;
/** A project whose parent's node_modules is the repo's: every peer and type package is there. */
let full: string;
/**
 * Projects with only the package's own dependencies and express (with its types), as a
 * memory-storage host has: one on Express 5, one on Express 4.
 */
const BARE = {
  5: { express: 'express', types: '@types/express' },
  4: { express: 'express4', types: 'types-express4' },
} as const;
const bare: Record<keyof typeof BARE, string> = { 5: '', 4: '' };
let packed: {
  name: string;
  exports: Record<string, unknown>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  sideEffects: unknown;
};
/** Every file in the tarball, relative to the package root. */
let packedFiles: string[];
/** The slow checks, started together once the projects exist; each test awaits its own. */
const checks = new Map<string, Promise<string>>();

function start(name: string, command: string, args: string[], cwd: string): void {
  const pending = exec(command, args, cwd);
  pending.catch(() => undefined); // awaited by its test; not an unhandled rejection meanwhile
  checks.set(name, pending);
}

async function exec(command: string, args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run(command, args, { cwd, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${failed.stdout ?? ''}${failed.stderr ?? failed.message}`);
  }
}

/** Unpacks the tarball to `<project>/node_modules/sms-outbox`, as `npm install <tarball>` lays it out. */
async function installTarball(project: string, tarball: string): Promise<void> {
  const target = join(project, 'node_modules', 'sms-outbox');
  await mkdir(target, { recursive: true });
  await exec('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'], project);
}

/** Links `target` (default `name`) from the repo's node_modules into `<project>/node_modules/<name>`. */
async function linkModule(project: string, name: string, target = name): Promise<void> {
  const link = join(project, 'node_modules', name);
  await mkdir(dirname(link), { recursive: true });
  await symlink(join(REPO_MODULES, target), link, 'dir');
}

async function writeFiles(project: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) await writeFile(join(project, name), text);
}

const tsconfig = (options: Record<string, unknown>, files: string[]) =>
  JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, types: ['node'], target: 'ES2022', ...options },
    files,
  });

/** Uses every entry's main export in ways that only type-check if the declarations resolve. */
const TYPED_USE = `
const sms: SmsRouter = createSmsRouter({ verifyKey: staticKeys([{ key: 'k', id: 'a', profiles: ['1'] }]), storage: new MemoryStorage() });
const doc: OpenApiDocument = buildOpenApiDocument({ basePath: '/x' });
const logger: SmsLogger = console;
const sqlite: Storage = new SqliteStorage({ path: ':memory:' });
const postgres: Storage = new PostgresStorage({ pool: undefined as unknown as PostgresStorageOptions['pool'] });
const smpp: DeliveryAdapter = new SmppDelivery({ url: 'smpp://u:p@127.0.0.1:2775' });
const suite: typeof runStorageContract = runStorageContract;
export const used = [sms, doc.openapi, logger, sqlite, postgres, smpp, suite];
`;
const TYPED_IMPORTS = (ext: string) => `
import { buildOpenApiDocument, createSmsRouter, MemoryStorage, staticKeys, type DeliveryAdapter, type OpenApiDocument, type SmsLogger, type SmsRouter, type Storage } from 'sms-outbox';
import { SqliteStorage } from 'sms-outbox/sqlite';
import { PostgresStorage, type PostgresStorageOptions } from 'sms-outbox/postgres';
import { SmppDelivery } from 'sms-outbox/smpp';
import { runStorageContract } from 'sms-outbox/testing';
// ${ext}
`;

/** Starts a router on memory storage and the simulator, sends one SMS, reads the OpenAPI document. */
const SMOKE = `
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const base = 'http://127.0.0.1:' + server.address().port + '/api/outbox';
const sent = await fetch(base + '/create', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
  body: JSON.stringify({ profile_code: '1', messages: [{ recipient: '254712345678', message: 'hi' }] }),
});
const doc = await fetch(base + '/openapi.json');
const result = { status: sent.status, body: await sent.json(), openapi: (await doc.json()).openapi };
await sms.close();
server.close();
`;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'sms-outbox-pack-'));
  await exec('npm', ['run', 'build'], REPO);
  const out = await exec('npm', ['pack', '--json', '--pack-destination', scratch], REPO);
  const tarball = join(scratch, (JSON.parse(out) as { filename: string }[])[0]!.filename);

  full = join(scratch, 'full', 'app');
  await mkdir(full, { recursive: true });
  await symlink(REPO_MODULES, join(scratch, 'full', 'node_modules'), 'dir');
  await installTarball(full, tarball);
  packed = JSON.parse(await readFile(join(full, 'node_modules', 'sms-outbox', 'package.json'), 'utf8'));
  packedFiles = (await readdir(join(full, 'node_modules', 'sms-outbox'), { recursive: true })).map((f) => f.split('\\').join('/'));

  // What npm installs for a host that adds express and nothing optional: the declared
  // dependencies (so an undeclared one fails here) and the types a TypeScript host adds.
  for (const [major, modules] of Object.entries(BARE)) {
    const project = join(scratch, `bare-express${major}`);
    bare[Number(major) as keyof typeof BARE] = project;
    await mkdir(project, { recursive: true });
    await installTarball(project, tarball);
    for (const name of [...Object.keys(packed.dependencies), '@types/node']) await linkModule(project, name);
    await linkModule(project, 'express', modules.express);
    await linkModule(project, '@types/express', modules.types);
  }

  await writeFiles(full, {
    'package.json': JSON.stringify({ name: 'full', private: true, type: 'commonjs' }),
    'esm.mjs': `
      const state = () => ({
        globals: Object.getOwnPropertyNames(globalThis).sort(),
        listeners: process.eventNames().map((name) => String(name) + ':' + process.listenerCount(name)).sort(),
        resources: process.getActiveResourcesInfo().sort(),
      });
      // The stdio streams open their handles on first use (undici touches stderr as it loads).
      void process.stdout, void process.stderr;
      const before = state();
      const main = await import('sms-outbox');
      const entries = { main: Object.keys(main).length };
      for (const sub of ${JSON.stringify(SUBPATHS)}) entries[sub] = Object.keys(await import('sms-outbox/' + sub)).length;
      // "sideEffects": false promises a bundler may drop an entry nothing uses: importing one
      // must leave no global, process listener, timer or handle behind.
      const after = state();
      const added = Object.fromEntries(Object.keys(before).map((k) => [k, after[k].filter((v) => !before[k].includes(v))]));
      entries.effects = Object.values(added).every((list) => list.length === 0) ? 'none' : added;
      const { SqliteStorage } = await import('sms-outbox/sqlite');
      const storage = new SqliteStorage({ path: ':memory:' });
      await storage.ready();
      await storage.close();
      console.log(JSON.stringify(entries));`,
    'cjs.cjs': `
      const main = require('sms-outbox');
      const loaded = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](better-sqlite3|pg|smpp|prom-client|@opentelemetry)[\\\\/]/.test(f));
      const entries = { main: Object.keys(main).length, loadedByMain: loaded };
      for (const sub of ${JSON.stringify(SUBPATHS)}) entries[sub] = Object.keys(require('sms-outbox/' + sub)).length;
      console.log(JSON.stringify(entries));`,
    'node16.mts': TYPED_IMPORTS('ESM under node16') + TYPED_USE,
    'node16.cts': TYPED_IMPORTS('CommonJS under node16') + TYPED_USE,
    'bundler.ts': TYPED_IMPORTS('bundler') + TYPED_USE,
    'tsconfig.node16.json': tsconfig({ module: 'node16', moduleResolution: 'node16' }, ['node16.mts', 'node16.cts']),
    // Declarations are checked in full by the node16 run; this one checks resolution only.
    'tsconfig.bundler.json': tsconfig({ module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true }, ['bundler.ts']),
  });

  const bareRouter = (load: string) => `
    ${load}
    const sms = createSmsRouter({ verifyKey: staticKeys([{ key: 'k', id: 'a', profiles: ['1'] }]), storage: new MemoryStorage(), delivery: new SimulatorDelivery() });
    const app = express();
    app.use(sms);
    // Which Express the host runs: Express 4 has express.query, Express 5 removed it.
    const expressMajor = 'query' in express ? 4 : 5;`;
  const bareFiles = {
    'package.json': JSON.stringify({ name: 'bare', private: true, type: 'module' }),
    'esm.mjs': `
      ${bareRouter(`import express from 'express';\nimport { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys } from 'sms-outbox';`)}
      ${SMOKE}
      const peers = {};
      for (const sub of ['sqlite', 'postgres', 'mysql']) {
        try { await import('sms-outbox/' + sub); peers[sub] = 'loaded'; } catch (error) { peers[sub] = error.code + ' ' + error.message.split('\\n')[0]; }
      }
      console.log(JSON.stringify({ ...result, peers, expressMajor }));`,
    'cjs.cjs': `
      (async () => {
        ${bareRouter(`const express = require('express');\nconst { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys } = require('sms-outbox');`)}
        ${SMOKE}
        const peers = {};
        for (const sub of ['sqlite', 'postgres', 'mysql']) {
          try { require('sms-outbox/' + sub); peers[sub] = 'loaded'; } catch (error) { peers[sub] = error.code + ' ' + error.message.split('\\n')[0]; }
        }
        console.log(JSON.stringify({ ...result, peers, expressMajor }));
      })();`,
    // Type-checks the package's declarations in full against the host's @types/express.
    'main.mts': `
      import express from 'express';
      import { createSmsRouter, SimulatorDelivery, staticKeys, type SmsRouter, type SmsRouterOptions } from 'sms-outbox';
      const options: SmsRouterOptions = { verifyKey: staticKeys([{ key: 'k', id: 'a' }]), delivery: new SimulatorDelivery() };
      const sms: SmsRouter = createSmsRouter(options).on('error', ({ error }) => console.error(error));
      const app = express();
      app.use(sms);
      app.use('/sms', sms);
      express.Router().use(sms);
      app.get('/', (_req, res) => { res.json({ ok: true }); });`,
    'tsconfig.json': tsconfig({ module: 'node16', moduleResolution: 'node16' }, ['main.mts']),
  };
  for (const project of Object.values(bare)) await writeFiles(project, bareFiles);

  start('full esm', 'node', ['esm.mjs'], full);
  start('full cjs', 'node', ['cjs.cjs'], full);
  start('full node16', TSC, ['-p', 'tsconfig.node16.json'], full);
  start('full bundler', TSC, ['-p', 'tsconfig.bundler.json'], full);
  for (const [major, project] of Object.entries(bare)) {
    start(`express${major} esm`, 'node', ['esm.mjs'], project);
    start(`express${major} cjs`, 'node', ['cjs.cjs'], project);
    start(`express${major} tsc`, TSC, ['-p', 'tsconfig.json'], project);
  }
  start('publint', PUBLINT, ['run', tarball, '--strict'], scratch);
  // No network: the declarations are checked as shipped, without fetching any @types package.
  start('attw', ATTW, [tarball, '--no-definitely-typed', '--format', 'json'], scratch);
}, 120_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships every file its exports map names, with import and require types', () => {
    const root = join(full, 'node_modules', 'sms-outbox');
    expect(Object.keys(packed.exports).sort()).toEqual(['.', './package.json', ...SUBPATHS.map((s) => `./${s}`)].sort());
    for (const [subpath, target] of Object.entries(packed.exports)) {
      if (typeof target === 'string') continue;
      const conditions = target as Record<string, { types: string; default: string }>;
      expect(Object.keys(conditions), subpath).toEqual(['import', 'require']);
      expect(conditions.import!.types, subpath).toMatch(/\.d\.ts$/);
      expect(conditions.require!.types, subpath).toMatch(/\.d\.cts$/);
      for (const file of Object.values(conditions).flatMap((c) => [c.types, c.default])) {
        expect(existsSync(join(root, file)), `${subpath}: ${file}`).toBe(true);
      }
    }
  });

  it('carries its license, and source maps without copies of the sources', async () => {
    expect(packedFiles).toContain('LICENSE');
    const license = await readFile(join(full, 'node_modules', 'sms-outbox', 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} sms-outbox contributors\n/);
    const maps = packedFiles.filter((file) => file.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    for (const map of maps) {
      const parsed = JSON.parse(await readFile(join(full, 'node_modules', 'sms-outbox', map), 'utf8')) as Record<string, unknown>;
      // The maps still name each frame's TypeScript file and line (node --enable-source-maps).
      expect(parsed.sources, map).toEqual(expect.arrayContaining([expect.stringMatching(/^\.\.\/src\/.+\.ts$/)]));
      expect(parsed, map).not.toHaveProperty('sourcesContent');
    }
    expect(packedFiles.filter((file) => file.startsWith('src/'))).toEqual([]);
  });

  it('passes publint, warnings included', async () => {
    await checks.get('publint')!;
  }, 90_000);

  it('resolves types for every entry in every resolution Are the Types Wrong knows (node10 too)', async () => {
    const report = JSON.parse(await checks.get('attw')!) as {
      analysis: { problems: unknown[]; entrypoints: Record<string, { resolutions: Record<string, { resolution?: { fileName: string } }> }> };
    };
    expect(report.analysis.problems).toEqual([]);
    const entrypoints = report.analysis.entrypoints;
    expect(Object.keys(entrypoints).sort()).toEqual(['.', './package.json', ...SUBPATHS.map((s) => `./${s}`)].sort());
    for (const [entry, { resolutions }] of Object.entries(entrypoints)) {
      expect(Object.keys(resolutions).sort(), entry).toEqual(['bundler', 'node10', 'node16-cjs', 'node16-esm']);
      if (entry === './package.json') continue;
      for (const [kind, { resolution }] of Object.entries(resolutions)) {
        expect(resolution?.fileName, `${entry} under ${kind}`).toMatch(kind === 'node16-cjs' ? /\.d\.cts$/ : /\.d\.ts$/);
      }
    }
  }, 90_000);

  it('installs beside Express 4.21 or later and Express 5 without peer conflicts, and declares no side effects', async () => {
    const range = packed.peerDependencies.express ?? '';
    // The two Express versions the suite runs on, and the ends of the range.
    const suite = await Promise.all(
      ['express', 'express4'].map(async (name) => (JSON.parse(await readFile(join(REPO_MODULES, name, 'package.json'), 'utf8')) as { version: string }).version),
    );
    for (const version of [...suite, '4.21.0', '5.0.0']) expect(semver.satisfies(version, range), version).toBe(true);
    for (const version of ['4.20.0', '3.21.2', '6.0.0']) expect(semver.satisfies(version, range), version).toBe(false);
    expect(packed.sideEffects).toBe(false);
  });

  it('imports the main entry and every subpath from ESM and from CommonJS, with no import-time side effects', async () => {
    const [esm, cjs] = await Promise.all([checks.get('full esm')!, checks.get('full cjs')!]);
    for (const out of [esm, cjs]) {
      const entries = JSON.parse(out) as Record<string, unknown>;
      for (const name of ['main', ...SUBPATHS]) expect(entries[name], name).toBeGreaterThan(0);
    }
    expect((JSON.parse(esm) as { effects: unknown }).effects).toBe('none');
    // Requiring the main entry loads no optional peer, even where all are installed.
    expect((JSON.parse(cjs) as { loadedByMain: string[] }).loadedByMain).toEqual([]);
  }, 90_000);

  it('type-checks from TypeScript with node16 (ESM and CommonJS) and bundler resolution', async () => {
    await Promise.all([checks.get('full node16')!, checks.get('full bundler')!]);
  }, 90_000);

  describe.each([5, 4] as const)('on an Express %i host', (major) => {
    it('serves SMS with only express installed: no optional peer is needed or loaded', async () => {
      for (const peer of OPTIONAL_PEERS) expect(existsSync(join(bare[major], 'node_modules', peer))).toBe(false);
      const [esm, cjs] = await Promise.all([checks.get(`express${major} esm`)!, checks.get(`express${major} cjs`)!]);
      for (const out of [esm, cjs]) {
        const result = JSON.parse(out) as { status: number; body: { sms_count: number }[]; openapi: string; expressMajor: number };
        expect(result.expressMajor).toBe(major);
        expect(result.status).toBe(200);
        expect(result.body[0]!.sms_count).toBe(1);
        expect(result.openapi).toBe('3.1.0');
      }
      // The SQLite entry says what to install, from ESM and CommonJS alike (its driver is
      // loaded when it is imported). The PostgreSQL entry loads no driver of its own: it
      // takes the host's pool, so it imports without pg.
      for (const out of [esm, cjs]) {
        expect((JSON.parse(out) as { peers: Record<string, string> }).peers).toEqual({
          sqlite: 'MODULE_NOT_FOUND sms-outbox/sqlite needs the `better-sqlite3` package: npm install better-sqlite3',
          postgres: 'loaded',
          mysql: 'loaded',
        });
      }
    }, 90_000);

    it(`type-checks a TypeScript host on @types/express@${major} against the declarations`, async () => {
      await checks.get(`express${major} tsc`)!;
    }, 90_000);
  });
});
