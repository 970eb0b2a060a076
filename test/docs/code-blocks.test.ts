/**
 * Every ```ts block of README.md and docs/*.md compiles under the package's strict
 * settings, against the package's own source (`sms-outbox` and its subpaths mapped to
 * src/): a reader who pastes one gets no type error, and a change of an exported type
 * that breaks a documented call fails here.
 *
 * Each block is a module of its own: it imports what it uses. The only names it may use
 * without declaring them stand for the reader's own things ({@link READER_CONTEXT}). A
 * block that is deliberately not a program (a list of signatures) is marked ```ts fragment
 * and is not compiled; marks stay rare ({@link MAX_FRAGMENTS}).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The names a block may use without declaring them: they stand for the reader's own key
 * check, storage, router, app, server, storage adapter, record store and billing.
 */
const READER_CONTEXT = `
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { KeyVerifier, RecordStore, SmsRouter, Storage } from 'sms-outbox';
declare global {
  /** The host's key check: staticKeys([...]) or its own function. */
  const verifyKey: KeyVerifier;
  /** The host's storage adapter. */
  const storage: Storage;
  /** A router the host made with createSmsRouter. */
  const sms: SmsRouter;
  /** The host's Express app. */
  const app: Express;
  /** The host's HTTP server. */
  const server: Server;
  /** The reader's own storage adapter. */
  const MyStorage: new () => Storage;
  /** The reader's own record store (docs/storage.md), over its own database. */
  const MyRecordStore: new () => RecordStore;
  /** The host's billing, called from an event. */
  function bill(principalId: string, units: number): void;
  /** The host's billing service, behind a credit hook. */
  const billing: {
    take(principalId: string, units: number, messages: readonly unknown[]): Promise<boolean>;
    giveBack(principalId: string, units: number, messages: readonly unknown[]): Promise<void>;
  };
}
export {};
`;

/** At most this many blocks may be marked `fragment`. */
const MAX_FRAGMENTS = 3;

/** One fenced ```ts block: where it is, its text, and whether it is marked a fragment. */
interface CodeBlock {
  where: string;
  code: string;
  fragment: boolean;
}

/** The ```ts blocks of one Markdown text; `where` is `<file>:<line of the fence>`. */
function tsBlocks(file: string, markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const fence = /^```(?:ts|typescript)([^\n]*)\n([\s\S]*?)^```[ \t]*$/gm;
  for (let match = fence.exec(markdown); match !== null; match = fence.exec(markdown)) {
    const line = markdown.slice(0, match.index).split('\n').length;
    blocks.push({ where: `${file}:${line}`, code: match[2]!, fragment: /\bfragment\b/.test(match[1]!) });
  }
  return blocks;
}

/** README.md and every page of docs/. */
function documents(): { file: string; text: string }[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages].map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));
}

/**
 * Type-checks `blocks` in one program; returns each error as `<where>+<line>: <message>`.
 * Errors in the package's own source are left to `tsc`.
 */
function typeErrors(blocks: readonly { where: string; code: string }[]): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2024.d.ts'],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    noUncheckedIndexedAccess: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    baseUrl: ROOT,
    paths: { 'sms-outbox': ['src/index.ts'], 'sms-outbox/*': ['src/*.ts'] },
  };
  // In memory, beside the package: a block's imports resolve as the reader's would.
  const virtual = new Map<string, string>();
  const contextFile = resolve(ROOT, '__docs-reader-context.ts');
  virtual.set(contextFile, READER_CONTEXT);
  // `export {}` makes every block a module, where `await` works at the top.
  const files = blocks.map((block, i) => {
    const name = resolve(ROOT, `__docs-block-${i}.ts`);
    virtual.set(name, `${block.code}\nexport {};\n`);
    return name;
  });
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(resolve(name));
    return text === undefined ? getSourceFile(name, language, ...rest) : ts.createSourceFile(name, text, language, true);
  };
  host.fileExists = (name) => virtual.has(resolve(name)) || fileExists(name);
  host.readFile = (name) => virtual.get(resolve(name)) ?? readFile(name);
  // The SMPP library's declarations, which the package keeps in a .d.ts of its own.
  const ambient = join(ROOT, 'src/delivery/smpp/types.d.ts');
  const program = ts.createProgram([contextFile, ambient, ...files], options, host);
  return ts.getPreEmitDiagnostics(program).flatMap((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (diagnostic.file === undefined) return [`(program): ${message}`];
    const index = files.indexOf(resolve(diagnostic.file.fileName));
    if (index === -1) return resolve(diagnostic.file.fileName) === contextFile ? [`(reader context): ${message}`] : [];
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    return [`${blocks[index]!.where}+${line + 1}: ${message}`];
  });
}

/** A block with the documented mistake this test exists for: a call on the nullable `sms.credit`. */
const PROBE = {
  where: 'probe',
  code: "import { createSmsRouter } from 'sms-outbox';\nconst s = createSmsRouter({ verifyKey, credit: { ledger: 'storage' } });\nawait s.credit.topUp('acme', 1);\n",
};

describe('the code blocks of README.md and docs/', () => {
  const blocks = documents().flatMap(({ file, text }) => tsBlocks(file, text));
  let errors: string[];
  // One program for every block and the probe: compiling the package's source is the cost.
  beforeAll(() => {
    errors = typeErrors([...blocks.filter((block) => !block.fragment), PROBE]);
  }, 120_000);

  it('are found, and few are marked fragment', () => {
    expect(blocks.length).toBeGreaterThan(15);
    expect(blocks.filter((block) => block.fragment).map((block) => block.where).length).toBeLessThanOrEqual(MAX_FRAGMENTS);
  });

  it('compile under strict TypeScript against the package', () => {
    expect(errors.filter((error) => !error.startsWith('probe+'))).toEqual([]);
  });

  // The check itself: the mistake the issue found in docs/credit.md is caught.
  it('catches a call on the nullable sms.credit', () => {
    expect(errors.filter((error) => error.startsWith('probe+'))).toEqual([expect.stringMatching(/^probe\+3: .*'s\.credit' is possibly 'null'/)]);
  });
});
