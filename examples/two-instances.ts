/**
 * Example: two instances of one gateway sharing PostgreSQL and Redis. Messages, states and
 * pending delivery reports live in one PostgreSQL schema (`PostgresStorage`), so a message
 * sent through one instance is reported by the other and submitted by exactly one of them;
 * rate limits are counted in Redis (`rate-limit-redis` for requests, `RedisBudgetStore` for
 * message budgets), so a key's limit is one limit, not one per instance.
 *
 * Run it: `npx tsx examples/two-instances.ts` (both instances in this process, on port `PORT`
 * and the next, 3000 and 3001 by default), or one instance per process: `INSTANCE=a PORT=3000
 * npx tsx examples/two-instances.ts` and `INSTANCE=b PORT=3001 ...`. `DATABASE_URL` and
 * `REDIS_URL` say where the services are. In your app, import from `sms-outbox` and
 * `sms-outbox/postgres` instead of `../src/...`.
 *
 * A real deployment runs one process per instance (a container each), behind a load
 * balancer that is the only address clients know; each process makes its pool and its
 * Redis client once at start-up, names itself with a stable `instanceId` (its host name,
 * say) so leases in the database show who holds them, and sets Express's `trust proxy` to
 * the balancer so failed-auth limits count clients, not the balancer.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import pg from 'pg';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { createClient } from 'redis';
import { createSmsRouter, RedisBudgetStore, staticKeys } from '../src/index.js';
import { PostgresStorage } from '../src/postgres.js';

/** Options of {@link startInstance} and {@link startTwoInstances}. */
export interface SharedServices {
  /** PostgreSQL connection settings (`connectionString` or host, user, ...); each instance makes its own pool. */
  postgres: pg.PoolConfig;
  /** The schema of the gateway's tables, the same for every instance. Default `sms_outbox`. */
  schema?: string;
  /** Where Redis is, e.g. `redis://127.0.0.1:6379`. */
  redisUrl: string;
  /** Prepended to every Redis key; the same for every instance of one deployment. Default `sms-outbox:`. */
  redisPrefix?: string;
  /** The one customer's API key. */
  apiKey: string;
  /** The customer's requests per minute (its principal's `rateLimit`), counted across all instances. Default 600. */
  requestsPerMinute?: number;
}

/** One running instance. */
export interface RunningInstance {
  /** Origin of the instance, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** Stops the server and the router, then closes the Redis client and the pool. */
  stop(): Promise<void>;
}

/** Starts one instance named `instanceId` on `port` (default: any free one). */
export async function startInstance(options: SharedServices & { instanceId: string; port?: number }): Promise<RunningInstance> {
  const prefix = options.redisPrefix ?? 'sms-outbox:';
  // What a separate process would have: its own pool and its own Redis client.
  const pool = new pg.Pool(options.postgres);
  // An idle client dropped by the server is replaced on the next query; without a
  // listener the pool's `error` event would end the process.
  pool.on('error', (error) => console.error(`${options.instanceId}: postgres: ${error.message}`));
  const redis = createClient({ url: options.redisUrl });
  redis.on('error', (error: unknown) => console.error(`${options.instanceId}: redis: ${String(error)}`));
  await redis.connect();
  // node-redis types its replies more widely than rate-limit-redis does; the values agree.
  const sendCommand = (...args: string[]) => redis.sendCommand(args) as Promise<RedisReply>;

  const sms = createSmsRouter({
    verifyKey: staticKeys([
      { key: options.apiKey, id: 'acme', profiles: ['12345'], rateLimit: options.requestsPerMinute ?? 600 },
    ]),
    storage: new PostgresStorage({ pool, schema: options.schema ?? 'sms_outbox' }),
    instanceId: options.instanceId,
    rateLimit: {
      // One new store per limiter, each under its own prefix.
      store: (name) => new RedisStore({ sendCommand, prefix: `${prefix}${name}:` }),
      budgetStore: new RedisBudgetStore({ sendCommand, prefix: `${prefix}messages:` }),
    },
  });
  sms.on('error', ({ error, source }) => console.error(`${options.instanceId}: ${source}: ${String(error)}`));

  const app = express();
  app.use(sms);
  const server = app.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      // The router's workers use the pool until they stop, so the pool ends last.
      await sms.close();
      await redis.close();
      await pool.end();
    },
  };
}

/** Starts instances `a` and `b` on the same PostgreSQL schema and Redis prefix. */
export async function startTwoInstances(options: SharedServices & { ports?: readonly [number, number] }) {
  const a = await startInstance({ ...options, instanceId: 'a', port: options.ports?.[0] });
  const b = await startInstance({ ...options, instanceId: 'b', port: options.ports?.[1] }).catch(async (error: unknown) => {
    await a.stop();
    throw error;
  });
  return {
    /** Origins of instance `a` and instance `b`. */
    urls: [a.url, b.url] as const,
    /** Stops both instances. */
    async stop() {
      await Promise.all([a.stop(), b.stop()]);
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const services: SharedServices = {
    postgres: { connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    apiKey: 'example-key',
  };
  const instance = process.env.INSTANCE;
  const port = Number(process.env.PORT || 3000);
  if (instance === undefined) {
    const { urls } = await startTwoInstances({ ...services, ports: [port, port + 1] });
    console.log(`instances on ${urls.join(' and ')} (X-API-Key: example-key)`);
  } else {
    const { url } = await startInstance({ ...services, instanceId: instance, port });
    console.log(`instance ${instance} on ${url} (X-API-Key: example-key)`);
  }
}
