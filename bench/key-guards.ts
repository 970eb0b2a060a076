/**
 * Micro-benchmark of the key check (issue 46): the authentication middleware alone, for a
 * `staticKeys` principal without guards (what every request paid before), with `scopes`, with
 * `expiresAt`, with `allowedIps` (a plain IPv4 client and the IPv4-mapped form a dual-stack
 * server sees), and for a host verifier that builds a new principal with an `allowedIps`
 * list on every call (read again each time, its blocks remembered by their text). Runs are
 * interleaved, so a busy machine slows every case alike; medians are printed.
 *
 * Run: `npx tsx bench/key-guards.ts`.
 */
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import { authenticate } from '../src/http/authenticate.js';
import { staticKeys } from '../src/auth/static-keys.js';
import type { KeyVerifier } from '../src/auth/principal.js';

const table = staticKeys([
  { key: 'plain', id: 'plain' },
  { key: 'scoped', id: 'scoped', scopes: ['send:quick', 'read'] },
  { key: 'expiring', id: 'expiring', expiresAt: '2099-01-01T00:00:00Z' },
  { key: 'fenced', id: 'fenced', allowedIps: ['10.0.0.0/8', '192.168.0.0/16', '127.0.0.0/8', '2001:db8::/32'] },
  { key: 'all', id: 'all', scopes: ['quick'], expiresAt: '2099-01-01T00:00:00Z', allowedIps: ['127.0.0.0/8'] },
]);
const hostVerifier: KeyVerifier = () => ({ id: 'host', allowedIps: ['10.0.0.0/8', '127.0.0.0/8'] });

const route = { endpoint: 'quick', scope: 'send:quick' } as const;
const emit = () => undefined;
const check = authenticate(table, route, Date.now, emit);
const hostCheck = authenticate(hostVerifier, route, Date.now, emit);

/** A request as the middleware reads it: the key header and `req.ip`. */
function requestOf(key: string, ip: string): Request {
  return { headers: { 'x-api-key': key }, ip } as unknown as Request;
}

const CASES: Record<string, { run: () => void }> = {};
function addCase(name: string, middleware: typeof check, req: Request): void {
  let failed: unknown;
  const next: NextFunction = (error?: unknown) => {
    if (error !== undefined) failed = error;
  };
  CASES[name] = {
    run: () => {
      const res = { locals: {} } as unknown as Response;
      middleware(req, res, next);
      if (failed !== undefined) throw new Error(`${name}: refused: ${String(failed)}`);
    },
  };
}
addCase('no guards', check, requestOf('plain', '127.0.0.1'));
addCase('scopes', check, requestOf('scoped', '127.0.0.1'));
addCase('expiresAt', check, requestOf('expiring', '127.0.0.1'));
addCase('allowedIps, IPv4', check, requestOf('fenced', '127.0.0.1'));
addCase('allowedIps, mapped', check, requestOf('fenced', '::ffff:127.0.0.1'));
addCase('allowedIps, IPv6', check, requestOf('fenced', '2001:db8::5'));
addCase('all three', check, requestOf('all', '127.0.0.1'));
addCase('host verifier, allowedIps', hostCheck, requestOf('any', '127.0.0.1'));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const CALLS = 20_000;
const ROUNDS = 25;
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]));
for (let round = 0; round < ROUNDS + 3; round++) {
  for (const [name, { run }] of Object.entries(CASES)) {
    const start = performance.now();
    for (let i = 0; i < CALLS; i++) run();
    // The first rounds warm the compiler up.
    if (round >= 3) samples[name]!.push(((performance.now() - start) * 1e6) / CALLS);
  }
}
const base = median(samples['no guards']!);
for (const [name, values] of Object.entries(samples)) {
  const ns = median(values);
  console.log(`${name.padEnd(28)} ${ns.toFixed(0).padStart(6)} ns/request  (+${(ns - base).toFixed(0)} ns)`);
}
