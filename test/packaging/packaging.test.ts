/**
 * The packed package, as a user gets it: `npm run build`, `npm pack`, the tarball unpacked
 * into scratch projects in the OS temp dir, then imported from ESM, CommonJS and
 * TypeScript (node16 and bundler resolution). No network: the tarball is unpacked as npm
 * would install it, and its dependencies are links into this repo's node_modules.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');
const REPO_MODULES = join(REPO, 'node_modules');
const TSC = join(REPO_MODULES, '.bin', 'tsc');
const SUBPATHS = ['sqlite', 'postgres', 'smpp', 'testing'] as const;
const OPTIONAL_PEERS = ['better-sqlite3', 'pg', 'smpp', 'prom-client'];

let scratch: string;
/** A project whose parent's node_modules is the repo's: every peer and type package is there. */
let full: string;
/** A project with only the package's own dependencies and express, as a memory-storage host has. */
let bare: string;
let packed: { name: string; exports: Record<string, unknown>; dependencies: Record<string, string> };
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

/** Links `name` from the repo's node_modules into `<project>/node_modules`. */
async function linkModule(project: string, name: string): Promise<void> {
  const link = join(project, 'node_modules', name);
  await mkdir(dirname(link), { recursive: true });
  await symlink(join(REPO_MODULES, name), link, 'dir');
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

  bare = join(scratch, 'bare');
  await mkdir(bare, { recursive: true });
  await installTarball(bare, tarball);
  // What npm installs for a host that adds express and nothing optional: the declared
  // dependencies (so an undeclared one fails here) and the types a TypeScript host adds.
  for (const name of [...Object.keys(packed.dependencies), 'express', '@types/express', '@types/node']) {
    await linkModule(bare, name);
  }

  await writeFiles(full, {
    'package.json': JSON.stringify({ name: 'full', private: true, type: 'commonjs' }),
    'esm.mjs': `
      const main = await import('sms-outbox');
      const entries = { main: Object.keys(main).length };
      for (const sub of ${JSON.stringify(SUBPATHS)}) entries[sub] = Object.keys(await import('sms-outbox/' + sub)).length;
      const { SqliteStorage } = await import('sms-outbox/sqlite');
      const storage = new SqliteStorage({ path: ':memory:' });
      await storage.ready();
      await storage.close();
      console.log(JSON.stringify(entries));`,
    'cjs.cjs': `
      const main = require('sms-outbox');
      const loaded = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](better-sqlite3|pg|smpp|prom-client)[\\\\/]/.test(f));
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
    app.use(sms);`;
  await writeFiles(bare, {
    'package.json': JSON.stringify({ name: 'bare', private: true, type: 'module' }),
    'esm.mjs': `
      ${bareRouter(`import express from 'express';\nimport { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys } from 'sms-outbox';`)}
      ${SMOKE}
      const peers = {};
      for (const sub of ['sqlite', 'postgres']) {
        try { await import('sms-outbox/' + sub); peers[sub] = 'loaded'; } catch (error) { peers[sub] = error.code + ' ' + error.message.split('\\n')[0]; }
      }
      console.log(JSON.stringify({ ...result, peers }));`,
    'cjs.cjs': `
      (async () => {
        ${bareRouter(`const express = require('express');\nconst { createSmsRouter, MemoryStorage, SimulatorDelivery, staticKeys } = require('sms-outbox');`)}
        ${SMOKE}
        const peers = {};
        for (const sub of ['sqlite', 'postgres']) {
          try { require('sms-outbox/' + sub); peers[sub] = 'loaded'; } catch (error) { peers[sub] = error.code + ' ' + error.message.split('\\n')[0]; }
        }
        console.log(JSON.stringify({ ...result, peers }));
      })();`,
    'main.mts': `
      import express from 'express';
      import { createSmsRouter, SimulatorDelivery, staticKeys, type SmsRouterOptions } from 'sms-outbox';
      const options: SmsRouterOptions = { verifyKey: staticKeys([{ key: 'k', id: 'a' }]), delivery: new SimulatorDelivery() };
      express().use(createSmsRouter(options));`,
    'tsconfig.json': tsconfig({ module: 'node16', moduleResolution: 'node16' }, ['main.mts']),
  });

  start('full esm', 'node', ['esm.mjs'], full);
  start('full cjs', 'node', ['cjs.cjs'], full);
  start('full node16', TSC, ['-p', 'tsconfig.node16.json'], full);
  start('full bundler', TSC, ['-p', 'tsconfig.bundler.json'], full);
  start('bare esm', 'node', ['esm.mjs'], bare);
  start('bare cjs', 'node', ['cjs.cjs'], bare);
  start('bare tsc', TSC, ['-p', 'tsconfig.json'], bare);
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

  it('imports the main entry and every subpath from ESM and from CommonJS', async () => {
    const [esm, cjs] = await Promise.all([checks.get('full esm')!, checks.get('full cjs')!]);
    for (const out of [esm, cjs]) {
      const entries = JSON.parse(out) as Record<string, unknown>;
      for (const name of ['main', ...SUBPATHS]) expect(entries[name], name).toBeGreaterThan(0);
    }
    // Requiring the main entry loads no optional peer, even where all are installed.
    expect((JSON.parse(cjs) as { loadedByMain: string[] }).loadedByMain).toEqual([]);
  }, 90_000);

  it('type-checks from TypeScript with node16 (ESM and CommonJS) and bundler resolution', async () => {
    await Promise.all([checks.get('full node16')!, checks.get('full bundler')!]);
  }, 90_000);

  it('serves SMS with only express installed: no optional peer is needed or loaded', async () => {
    for (const peer of OPTIONAL_PEERS) expect(existsSync(join(bare, 'node_modules', peer))).toBe(false);
    const [esm, cjs] = await Promise.all([checks.get('bare esm')!, checks.get('bare cjs')!, checks.get('bare tsc')!]);
    for (const out of [esm, cjs]) {
      const result = JSON.parse(out) as { status: number; body: { sms_count: number }[]; openapi: string };
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
      });
    }
  }, 90_000);
});
