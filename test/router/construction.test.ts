/**
 * Adapters are checked when the router is built: an adapter without its methods would
 * otherwise fail every request with a 500 and a bare `deps.storage.insertMessages is not a
 * function`. A verifier that returns something other than a principal is the host's bug:
 * a 500 and an error event, not 422 "Invalid Profile Code".
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createSmsRouter,
  OptionError,
  MemoryStorage,
  SimulatorDelivery,
  staticKeys,
  staticProfiles,
  type DeliveryAdapter,
  type ErrorEvent,
  type SmsRouterOptions,
  type Storage,
} from '../../src/index.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { SqliteStorage } from '../../src/sqlite.js';
import { PostgresStorage } from '../../src/postgres.js';
import { createGateway, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

const verifyKey = staticKeys([{ key: 'k', id: 'acme', profiles: ['12345'] }]);
const build = (options: Record<string, unknown>) => () => createSmsRouter({ verifyKey, ...options } as SmsRouterOptions);

/** Every Storage method of a MemoryStorage but `drop`, as own properties. */
function storageWithout(...drop: string[]): Storage {
  const inner = new MemoryStorage();
  const names = [...Object.getOwnPropertyNames(Ledger.prototype), ...Object.keys(inner)].filter(
    (n) => n !== 'constructor' && !drop.includes(n) && typeof (inner as unknown as Record<string, unknown>)[n] === 'function',
  );
  return Object.fromEntries(names.map((n) => [n, (inner as unknown as Record<string, Function>)[n]!.bind(inner)])) as unknown as Storage;
}

describe('createSmsRouter checks its adapters', () => {
  it('refuses a storage without its methods, naming the missing ones', () => {
    expect(build({ storage: {} })).toThrow(
      new OptionError(
        'createSmsRouter: `storage` is not a Storage: an object without the methods insertMessages(), claimMessages(), ' +
          'recordSubmission(), reschedule(), finish(), expireOverdue(), applyReceipt(), getMessage(), findByExternalId(), ' +
          'claimCallbacks(), deferCallbacks(), recordCallbackAttempt(), purge()',
        'INVALID_ADAPTER',
      ),
    );
    expect(build({ storage: storageWithout('purge') })).toThrow(
      'createSmsRouter: `storage` is not a Storage: an object without the method purge()',
    );
    expect(build({ storage: Object.assign(storageWithout(), { ready: 'yes' }) })).toThrow(
      'createSmsRouter: `storage`.ready must be a method (or absent), got a string',
    );
  });

  it('says `did you mean new X()?` for a class passed instead of an instance', () => {
    expect(build({ storage: MemoryStorage })).toThrow(
      'createSmsRouter: `storage` is the class MemoryStorage, not an instance: did you mean new MemoryStorage()?',
    );
    expect(build({ storage: SqliteStorage })).toThrow('did you mean new SqliteStorage(...)?');
    expect(build({ delivery: SimulatorDelivery })).toThrow(
      'createSmsRouter: `delivery` is the class SimulatorDelivery, not an instance: did you mean new SimulatorDelivery()?',
    );
  });

  it('refuses a delivery adapter without its methods, as a delivery adapter', () => {
    expect(build({ delivery: {} })).toThrow(
      'createSmsRouter: `delivery` is not a DeliveryAdapter: an object without the methods start(), submit(), close()',
    );
    expect(build({ delivery: { start: async () => {}, close: async () => {} } })).toThrow(/without the method submit\(\)$/);
  });

  it('refuses null for an optional adapter rather than quietly using memory or the fake carrier', () => {
    expect(build({ storage: null })).toThrow(
      'createSmsRouter: `storage` is null; leave it out to get the default (new MemoryStorage(), lost on restart), or pass one',
    );
    expect(build({ delivery: null })).toThrow(/`delivery` is null; leave it out to get the default \(new SimulatorDelivery\(\), a fake carrier\)/);
    expect(build({ resolveProfile: null })).toThrow(/`resolveProfile` is null/);
  });

  it('names the other common mistakes: a Promise, a factory, a non-object', () => {
    const pending = Promise.resolve(new MemoryStorage());
    expect(build({ storage: pending })).toThrow('createSmsRouter: `storage` is a Promise, not a Storage: await it before passing it');
    const makeStorage = () => new MemoryStorage();
    expect(build({ storage: makeStorage })).toThrow(
      'createSmsRouter: `storage` is the function makeStorage, not a Storage: pass what it returns, e.g. makeStorage(...)',
    );
    expect(build({ storage: 'sqlite' })).toThrow('createSmsRouter: `storage` must be a Storage object, got a string');
    expect(build({ resolveProfile: {} })).toThrow(
      'createSmsRouter: `resolveProfile` must be a function (code, principal) => Profile | null, got an object',
    );
    expect(build({ resolveProfile: staticProfiles })).toThrow(/is the factory staticProfiles itself: did you mean staticProfiles\(\[\.\.\.\]\)\?/);
    expect(() => createSmsRouter({ verifyKey: staticKeys } as never)).toThrow(/did you mean staticKeys\(\[\.\.\.\]\)\?/);
  });

  it('reports a carrier that fails to start as a delivery error, not a storage one', async () => {
    const delivery: DeliveryAdapter = {
      start: async () => {
        throw new Error('bind refused');
      },
      submit: async () => ({ carrierId: 'x' }),
      close: async () => {},
    };
    const sms = createSmsRouter({ verifyKey, delivery });
    const errors: ErrorEvent[] = [];
    sms.on('error', (e) => errors.push(e));
    await expect(sms.ready()).rejects.toThrow('bind refused');
    expect(errors.map((e) => [e.source, (e.error as Error).message])).toContainEqual(['delivery', 'bind refused']);
    expect(errors.some((e) => e.source === 'storage')).toBe(false);
    await sms.close();
  });
});

describe('a verifyKey that returns something other than a principal', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.sms.close();
    gateway = undefined;
  });

  const cases: [string, unknown, string][] = [
    ['a string', 'acme-secret-id', 'verifyKey returned a string;'],
    ['an object without an id', { name: 'acme', token: 'hunter2' }, 'verifyKey returned an object without an `id`;'],
    ['an object with a numeric id', { id: 42 }, 'verifyKey returned an object whose `id` is a number;'],
    ['an object with an empty id', { id: '' }, 'verifyKey returned an object whose `id` is empty;'],
    ['true', true, 'verifyKey returned a boolean;'],
  ];

  it.each(cases)('answers 500 for %s and emits an error naming its type, not its value', async (_name, returned, expected) => {
    gateway = createGateway({ verifyKey: async () => returned as never, rateLimit: false });
    const errors: ErrorEvent[] = [];
    gateway.sms.on('error', (e) => errors.push(e));
    const res = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', 'any')
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'hi' }] });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ details: '500 server-error', code: 'SERVER_ERROR' });
    const [event] = await eventually(() => (errors.length > 0 ? errors : undefined));
    const message = (event!.error as Error).message;
    expect(message).toContain(expected);
    expect(message).toContain('it must return a Principal (an object with a non-empty string `id`) or null');
    expect(message).not.toMatch(/acme|hunter2|42/);
  });
});

describe('PostgresStorage without a pool', () => {
  it('says what to install and pass', () => {
    for (const options of [{}, { pool: null }, { pool: 'postgres://localhost/test' }]) {
      expect(() => new PostgresStorage(options as never)).toThrow('`pool` must be a pg.Pool (npm install pg, then new pg.Pool({ connectionString }))');
    }
  });
});
