import net from 'node:net';
import express from 'express';
import { pino } from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSmsRouter, type SmsLogger } from '../src/index.js';
import { SmppDelivery } from '../src/smpp.js';
import { SmsEventEmitter } from '../src/observe/events.js';
import { attachLogger } from '../src/observe/logging.js';
import { createGateway, KEY, testKeys, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/poll.js';
import { startReceiver, type Receiver } from './dlr/helpers.js';

type Line = { level: string; obj: Record<string, unknown>; msg: string };

/** A pino-shaped logger that records every call, with `this` checked as pino needs it. */
function fakeLogger(withDebug = true): SmsLogger & { lines: Line[] } {
  const lines: Line[] = [];
  const method = (level: string) =>
    function (this: unknown, obj: Record<string, unknown>, msg: string) {
      if (this !== logger) throw new Error('called without its logger as `this`');
      lines.push({ level, obj, msg });
    };
  const logger: SmsLogger & { lines: Line[] } = {
    lines,
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    ...(withDebug ? { debug: method('debug') } : {}),
  };
  return logger;
}

const events = (lines: Line[], level?: string) =>
  lines.filter((line) => level === undefined || line.level === level).map((line) => line.obj.event);

let gateway: TestGateway | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await gateway?.sms.close();
  await receiver?.close();
  gateway = receiver = undefined;
});

async function sendOne(app: TestGateway['app'], extra: Record<string, unknown> = {}) {
  const res = await request(app)
    .post('/api/outbox/create')
    .set('X-API-Key', KEY)
    .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'secret text', external_id: 'e-1' }], ...extra });
  expect(res.status).toBe(200);
  return res.body[0].message_ref as string;
}

describe('logger option', () => {
  it('logs a message\u2019s life at debug and its terminal state at info, without text or number', async () => {
    const logger = fakeLogger();
    gateway = createGateway({ logger });
    const ref = await sendOne(gateway.app);
    await eventually(() => logger.lines.some((l) => l.obj.event === 'message.status' && l.level === 'info'));
    expect(events(logger.lines, 'debug')).toEqual(['message.accepted', 'message.submitted', 'message.status']);
    const terminal = logger.lines.find((l) => l.level === 'info' && l.obj.event === 'message.status')!;
    expect(terminal.obj).toMatchObject({ event: 'message.status', ref, state: 'delivered', previousState: 'submitted', externalId: 'e-1' });
    expect(terminal.msg).toBe('sms delivered');
    const everything = JSON.stringify(logger.lines);
    expect(everything).not.toContain('secret text');
    expect(everything).not.toContain('254712345678');
  });

  it('drops debug lines when the logger has no debug method', async () => {
    const logger = fakeLogger(false);
    gateway = createGateway({ logger });
    await sendOne(gateway.app);
    await eventually(() => logger.lines.some((l) => l.obj.event === 'message.status'));
    expect(events(logger.lines)).toEqual(['storage.ready', 'carrier.connection', 'message.status']);
  });

  it('logs a rejected request at debug, never at info, and an unexpected error at error', async () => {
    const logger = fakeLogger();
    gateway = createGateway({ logger });
    const refused = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'wrong').send({});
    expect(refused.status).toBe(401);
    await request(gateway.app).get('/api/outbox/delivery-status/nope').set('X-API-Key', KEY).expect(404);
    expect(logger.lines).toContainEqual({
      level: 'debug',
      obj: expect.objectContaining({ event: 'request.rejected', status: 401, details: 'Invalid API key', endpoint: 'quick' }),
      msg: 'request rejected: 401',
    });
    expect(logger.lines.filter((l) => l.obj.event === 'request.rejected').map((l) => [l.level, l.obj.status])).toEqual([
      ['debug', 401],
      ['debug', 404],
    ]);
    const boom = new Error('listener boom');
    gateway.sms.on('message.accepted', () => {
      throw boom;
    });
    await sendOne(gateway.app);
    expect(logger.lines).toContainEqual({
      level: 'error',
      obj: expect.objectContaining({ event: 'error', source: 'listener', err: boom }),
      msg: 'sms-outbox listener error',
    });
  });

  it('logs a refusal for the gateway’s own state (503, the backlog full) at warn, and drops 4xx lines without debug', () => {
    for (const withDebug of [true, false]) {
      const logger = fakeLogger(withDebug);
      const events = new SmsEventEmitter();
      attachLogger(events, logger);
      const rejected = { endpoint: 'quick', principalId: 'acme', ip: '10.0.0.1' } as const;
      events.emit('request.rejected', { ...rejected, status: 429, details: 'Too many requests' });
      events.emit('request.rejected', { ...rejected, status: 503, details: 'The gateway has too many queued messages' });
      expect(logger.lines.map((l) => [l.level, l.obj.status, l.msg])).toEqual([
        ...(withDebug ? [['debug', 429, 'request rejected: 429']] : []),
        ['warn', 503, 'request refused: 503'],
      ]);
    }
  });

  it('logs a delivery report that failed at warn, without the query string of its URL', async () => {
    receiver = await startReceiver(() => ({ status: 500 }));
    const logger = fakeLogger();
    gateway = createGateway({ logger, dlr: { schedule: [0, 1], allowPrivateAddresses: true, pollIntervalMs: 20 } });
    await sendOne(gateway.app, { dlr_callback_url: `${receiver.origin}/dlr?token=hush` });
    await eventually(() => logger.lines.some((l) => l.obj.event === 'dlr.failed'));
    const warned = logger.lines.filter((l) => l.level === 'warn');
    expect(warned.map((l) => l.obj.event)).toEqual(['dlr.retrying', 'dlr.failed']);
    expect(warned[1]!.obj).toMatchObject({ attempt: 2, statusCode: 500, url: `${receiver.origin}/dlr` });
    expect(JSON.stringify(logger.lines)).not.toContain('hush');
  });

  it('prints nothing when no logger is given', async () => {
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((name) => vi.spyOn(console, name));
    const write = vi.spyOn(process.stdout, 'write');
    gateway = createGateway();
    const statuses: string[] = [];
    gateway.sms.on('message.status', ({ message }) => statuses.push(message.state));
    await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'wrong').send({});
    await sendOne(gateway.app);
    await eventually(() => statuses.includes('delivered'));
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    expect(write).not.toHaveBeenCalled();
  });

  it('refuses a logger without the needed methods at construction', () => {
    expect(() => createGateway({ logger: { info() {}, warn() {} } as unknown as SmsLogger })).toThrow(/`logger.error` must be a function/);
    expect(() => createGateway({ logger: { ...fakeLogger(), debug: 'yes' } as unknown as SmsLogger })).toThrow(/`logger.debug`/);
  });

  it('works with pino itself: JSON lines with levels, and errors with their stack', async () => {
    const out: Record<string, unknown>[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void out.push(JSON.parse(line) as Record<string, unknown>) });
    gateway = createGateway({ logger });
    gateway.sms.on('message.submitted', () => {
      throw new Error('pino boom');
    });
    await sendOne(gateway.app);
    await eventually(() => out.some((l) => l.event === 'message.status' && l.level === 30));
    expect(out.find((l) => l.event === 'message.accepted')).toMatchObject({ level: 20, msg: 'sms accepted' });
    const error = out.find((l) => l.event === 'error') as { level: number; err: { message: string; stack: string } };
    expect(error.level).toBe(50);
    expect(error.err.message).toBe('pino boom');
    expect(error.err.stack).toContain('pino boom');
  });

  it('leads every line with module "sms-outbox", and says at info that storage is ready and the carrier bound', async () => {
    const logger = fakeLogger();
    gateway = createGateway({ logger });
    await sendOne(gateway.app);
    await eventually(() => logger.lines.some((l) => l.obj.event === 'message.status' && l.level === 'info'));
    expect(logger.lines.every((l) => Object.keys(l.obj)[0] === 'module' && l.obj.module === 'sms-outbox')).toBe(true);
    const started = logger.lines.filter((l) => l.level === 'info').slice(0, 2);
    expect(started).toEqual([
      { level: 'info', obj: expect.objectContaining({ event: 'storage.ready', storage: 'MemoryStorage' }), msg: 'storage ready' },
      {
        level: 'info',
        obj: expect.objectContaining({ event: 'carrier.connection', bind: 'simulator', state: 'bound', reconnect: false }),
        msg: 'carrier simulator bound',
      },
    ]);
  });

  it('carries the host\u2019s request id (pino-http\u2019s `req.id`) on the lines a request causes', async () => {
    const logger = fakeLogger();
    const sms = createSmsRouter({ verifyKey: testKeys, logger, worker: { pollIntervalMs: 20 } });
    gateway = { app: express(), sms };
    let next = 41;
    // What pino-http does: a number per request unless the host generates its own.
    gateway.app.use((req, _res, go) => {
      (req as { id?: unknown }).id = req.headers['x-request-id'] ?? (next += 1);
      go();
    });
    gateway.app.use(sms);
    await sendOne(gateway.app);
    await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'wrong').set('X-Request-Id', 'abc-7').send({}).expect(401);
    expect(logger.lines.find((l) => l.obj.event === 'message.accepted')?.obj).toMatchObject({ reqId: 42 });
    expect(logger.lines.find((l) => l.obj.event === 'request.rejected')?.obj).toMatchObject({ reqId: 'abc-7', status: 401 });
  });

  it('leaves the request id out when the host has none', async () => {
    const logger = fakeLogger();
    gateway = createGateway({ logger });
    await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'wrong').send({}).expect(401);
    const rejected = logger.lines.find((l) => l.obj.event === 'request.rejected');
    expect(rejected?.obj).not.toHaveProperty('reqId');
  });

  it('prints a refused carrier connection\u2019s reason once through pino, with its system code', async () => {
    // A port nothing listens on: every connect is refused.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const out: Record<string, unknown>[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void out.push(JSON.parse(line) as Record<string, unknown>) });
    const delivery = new SmppDelivery({ url: `smpp://gateway:secret@127.0.0.1:${port}`, reconnectMinMs: 20, reconnectMaxMs: 50 });
    gateway = createGateway({ logger, delivery });
    await eventually(() => out.some((l) => l.event === 'carrier.connection' && l.attempt === 2));
    const outage = out.filter((l) => l.level === 50);
    expect(outage).toHaveLength(1);
    const err = outage[0]!.err as { message: string; code: string };
    expect(err.message).toBe(`SMPP connect to 127.0.0.1:${port} failed: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(err.code).toBe('ECONNREFUSED');
  });
});
