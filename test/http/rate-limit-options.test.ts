/** The rateLimit option: turning limits off, the errors of bad options, and the host's store factory. */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from 'express-rate-limit';
import { OptionError, type SmsRouterOptions } from '../../src/index.js';
import { createGateway, KEY } from '../helpers/gateway.js';
import { closeGatewayAfterEach, policy, send, start } from './limited-gateway.js';

closeGatewayAfterEach();

describe('rateLimit options', () => {
  it('rateLimit: false turns every limit off', async () => {
    const app = (() => {
      const { app: built } = start({ rateLimit: false });
      built.set('trust proxy', 'loopback');
      return built;
    })();
    for (let i = 0; i < 25; i++) expect((await send(app, `wrong-${i}`, 1, 'x', '203.0.113.99')).status).toBe(401);
    const ok = await send(app, KEY, 1000, 'x', '203.0.113.99');
    expect(ok.status).toBe(200);
    expect(ok.headers['ratelimit']).toBeUndefined();
    expect(ok.headers['ratelimit-policy']).toBeUndefined();
  });

  it('a limiter set to false is off while the others stay on', async () => {
    const { app } = start({ rateLimit: { requests: false, messages: { limit: 5 }, headers: 'always' } });
    const res = await send(app, KEY, 5);
    expect(res.status).toBe(200);
    expect(policy(res, 'ratelimit', 'requests')).toBeUndefined();
    expect(policy(res, 'ratelimit', 'messages')).toMatch(/^"messages"; r=0; /);
  });

  it('throws at construction for an unknown or bad option, with a hint', () => {
    const make = (rateLimit: unknown) => () => createGateway({ rateLimit: rateLimit as SmsRouterOptions['rateLimit'] });
    expect(make({ request: {} })).toThrow(new OptionError('rateLimit: unknown option `request`. Did you mean `requests`?', 'UNKNOWN_OPTION'));
    expect(make({ requests: { limt: 5 } })).toThrow(new OptionError('rateLimit.requests: unknown option `limt`. Did you mean `limit`?', 'UNKNOWN_OPTION'));
    expect(make({ failedAuth: { windowMS: 5 } })).toThrow(/Did you mean `windowMs`\?/);
    expect(make({ requests: { limit: -1 } })).toThrow(/rateLimit\.requests\.limit must be an integer >= 0/);
    expect(make({ messages: { windowMs: 0 } })).toThrow(/rateLimit\.messages\.windowMs must be an integer >= 1/);
    expect(make({ failedAuth: { limit: 0 } })).toThrow(/rateLimit\.failedAuth\.limit must be an integer >= 1/);
    expect(make({ failedAuth: { ipv6Subnet: 128 } })).toThrow(/ipv6Subnet must be at most 64/);
    expect(make({ store: new MemoryStore() })).toThrow(/rateLimit\.store must be a function/);
    expect(make({ budgetStore: {} })).toThrow(/rateLimit\.budgetStore must be a BudgetStore/);
    expect(make({ headers: 'sometimes' })).toThrow(/rateLimit\.headers must be 'refused' or 'always'/);
    expect(make('yes')).toThrow(/rateLimit must be an object or false/);
    const shared = new MemoryStore();
    expect(make({ store: () => shared })).toThrow(/must return a new Store for each limiter/);
    expect(make({ store: () => ({}) })).toThrow(/rateLimit\.store\("failed-auth"\) must return an express-rate-limit Store/);
  });

  it('uses a store per limiter from the host factory', async () => {
    const names: string[] = [];
    const { app } = start({
      rateLimit: {
        requests: { limit: 1 },
        store: (name) => {
          names.push(name);
          return new MemoryStore();
        },
      },
    });
    expect(names.sort()).toEqual(['failed-auth', 'requests']);
    expect((await send(app, KEY)).status).toBe(200);
    expect((await send(app, KEY)).status).toBe(429);
  });
});
