/**
 * Storage faults with the real PostgreSQL adapter: the database behind a TCP proxy that
 * the test cuts and restores. While it is gone, sends answer exactly the documented 500
 * and store nothing (or, if the cut came after the statement reached the server, all of
 * the request: never part of it); when it returns, the same router works again.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresStorage } from '../../src/postgres.js';
import { dropSchema, freshSchema, makePool, postgresUnavailable } from '../e2e/postgres-service.js';
import { KEY } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { assertNoLeak } from '../helpers/no-leak.js';
import { startFuzzGateway, type FuzzGateway } from '../fuzz/harness.js';
import { TcpProxy } from './tcp-proxy.js';

const unavailable = await postgresUnavailable('storage fault tests');
const direct = makePool(2);
const schemas: string[] = [];
let proxy: TcpProxy | undefined;
let gateway: FuzzGateway | undefined;
let pool: pg.Pool | undefined;

afterEach(async () => {
  await gateway?.close();
  await pool?.end().catch(() => undefined);
  await proxy?.close();
  gateway = undefined;
  pool = undefined;
  proxy = undefined;
});
afterAll(async () => {
  for (const schema of schemas) await dropSchema(direct, schema).catch(() => undefined);
  await direct.end();
});

/** A router on PostgresStorage whose connections go through a fresh proxy. */
async function start(): Promise<{ gateway: FuzzGateway; proxy: TcpProxy; schema: string; storageErrors: unknown[] }> {
  proxy = await TcpProxy.start(Number(process.env.PGPORT ?? 5432));
  pool = new pg.Pool({
    host: '127.0.0.1',
    port: proxy.port,
    user: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD,
    database: process.env.PGDATABASE ?? 'test',
    max: 3,
    connectionTimeoutMillis: 1_000,
  });
  // An idle client whose connection dies is reported here; without a listener the host
  // process would crash (SECURITY.md tells hosts to add one).
  pool.on('error', () => undefined);
  const schema = freshSchema('fault');
  schemas.push(schema);
  gateway = await startFuzzGateway({ storage: new PostgresStorage({ pool, schema }), worker: { pollIntervalMs: 50 } });
  const storageErrors: unknown[] = [];
  gateway.sms.on('error', ({ error, source }) => {
    if (source !== 'request') storageErrors.push(error);
  });
  return { gateway, proxy, schema, storageErrors };
}

const messages = (externalId: string, n: number) => ({
  profile_code: '12345',
  messages: Array.from({ length: n }, () => ({ recipient: '254712345678', message: 'fault', external_id: externalId })),
});

function send(g: FuzzGateway, body: unknown) {
  return g.send({ method: 'POST', path: '/api/outbox/create', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
}

async function storedCount(schema: string, externalId: string): Promise<number> {
  const result = await direct.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".ledger_messages WHERE external_id = $1`, [externalId]);
  return Number(result.rows[0]!.n);
}

describe.skipIf(unavailable !== null)('PostgreSQL unreachable', () => {
  it('answers exactly the documented 500 while it is gone, stores nothing, and works again when it returns', async () => {
    const { gateway: g, proxy: p, schema } = await start();
    expect((await send(g, messages('before', 2))).status).toBe(200);

    p.cut();
    const during = await send(g, messages('during', 3));
    expect([during.status, during.text]).toEqual([500, JSON.stringify({ details: '500 server-error', code: 'SERVER_ERROR' })]);
    assertNoLeak(during.text);
    expect(g.requestErrors.length).toBeGreaterThan(0);
    const lookup = await g.send({ method: 'GET', path: '/api/outbox/delivery-status?external_id=before', headers: { 'x-api-key': KEY } });
    expect([lookup.status, lookup.text]).toEqual([500, JSON.stringify({ details: '500 server-error', code: 'SERVER_ERROR' })]);
    expect(await storedCount(schema, 'during')).toBe(0);

    p.restore();
    const after = await eventually(async () => {
      const answer = await send(g, messages('after', 2));
      return answer.status === 200 ? answer : undefined;
    }, { timeoutMs: 10_000 });
    expect(JSON.parse(after.text)).toHaveLength(2);
    expect(await storedCount(schema, 'after')).toBe(2);
    const found = await g.send({ method: 'GET', path: '/api/outbox/delivery-status?external_id=before', headers: { 'x-api-key': KEY } });
    expect(JSON.parse(found.text)).toHaveLength(2);
  });

  it('stores all of a request or none when the connection dies with the INSERT in flight', async () => {
    const { gateway: g, proxy: p, schema } = await start();
    expect((await send(g, messages('warm', 1))).status).toBe(200);
    p.cutAfter((chunk) => chunk.includes('INSERT INTO'));
    const answer = await send(g, messages('in-flight', 5));
    expect(answer.status).toBe(500);
    assertNoLeak(answer.text, 500);
    // The server may have committed before it saw the connection go: then the whole
    // request is stored (and will be sent), never a part of it.
    expect([0, 5]).toContain(await storedCount(schema, 'in-flight'));
    p.restore();
    await eventually(async () => (await send(g, messages('later', 1))).status === 200, { timeoutMs: 10_000 });
  });

  it('terminated backends (pg_terminate_backend) cost the requests in flight a 500, not the router', async () => {
    const { gateway: g, proxy: p, schema } = await start();
    expect((await send(g, messages('pre-kill', 1))).status).toBe(200);
    // Only this test's connections (the proxy's), never another test's on the same server.
    const ports = p.upstreamPorts();
    expect(ports.length).toBeGreaterThan(0);
    const killed = await direct.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE client_port = ANY($1::int[])', [ports]);
    expect(killed.rowCount).toBe(ports.length);
    const answers = await Promise.all([1, 2, 3].map((i) => send(g, messages(`post-kill-${i}`, 2))));
    for (const answer of answers) {
      expect([200, 500]).toContain(answer.status);
      if (answer.status === 500) assertNoLeak(answer.text, 500);
    }
    for (const i of [1, 2, 3]) expect([0, 2]).toContain(await storedCount(schema, `post-kill-${i}`));
    await eventually(async () => (await send(g, messages('recovered', 1))).status === 200, { timeoutMs: 10_000 });
  });
});

describe.skipIf(unavailable !== null)('PostgreSQL unreachable when the router starts', () => {
  // A database down at start-up once left every request answering 500 until a restart.
  it('answers 500 until it is reachable, then serves requests without a restart', async () => {
    proxy = await TcpProxy.start(Number(process.env.PGPORT ?? 5432));
    proxy.cut();
    pool = new pg.Pool({ host: '127.0.0.1', port: proxy.port, user: 'postgres', database: process.env.PGDATABASE ?? 'test', max: 2, connectionTimeoutMillis: 1_000 });
    pool.on('error', () => undefined);
    const schema = freshSchema('fault');
    schemas.push(schema);
    gateway = await startFuzzGateway({ storage: new PostgresStorage({ pool, schema }) }, { awaitReady: false });
    const g = gateway;
    const down = await send(g, messages('down', 1));
    expect([down.status, down.text]).toEqual([500, JSON.stringify({ details: '500 server-error', code: 'SERVER_ERROR' })]);
    proxy.restore();
    await eventually(async () => (await send(g, messages('up', 1))).status === 200, { timeoutMs: 3_000 });
    expect(await storedCount(schema, 'down')).toBe(0);
    expect(await storedCount(schema, 'up')).toBeGreaterThan(0);
  });
});
