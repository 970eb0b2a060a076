/**
 * `RedisBudgetStore`: message budgets in Redis (or Valkey), shared by every instance. It
 * takes the same `sendCommand` function as rate-limit-redis, so the host's one client
 * serves both and this package depends on no Redis library.
 */
import type { BudgetStore, BudgetTake } from './budget-store.js';
import { OptionError } from '../../errors.js';
import { RedisScript, type SendRedisCommand } from '../../util/redis-script.js';

/** Options of {@link RedisBudgetStore}. */
export interface RedisBudgetStoreOptions {
  /**
   * Sends a raw command and resolves with its reply: node-redis
   * `(...args) => client.sendCommand(args)`, ioredis `(command, ...args) => client.call(command, ...args)`.
   */
  sendCommand: SendRedisCommand;
  /** Prepended to every key; give each deployment its own. Default `sms-outbox:messages:`. */
  prefix?: string;
}

// Check and add in one script, so that no two instances both fit into the same room. A
// key that is missing, or somehow has no expiry, starts a fresh window (SET ... PX is
// INCRBY and PEXPIRE in one command). Replies {taken (0/1), used, ms until the window ends}.
const TAKE_SCRIPT = `
local count = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
local running = ttl > 0
local used = 0
if running then used = tonumber(redis.call('GET', KEYS[1]) or '0') else ttl = window end
if used + count > limit then return {0, used, ttl} end
if running then return {1, redis.call('INCRBY', KEYS[1], count), ttl} end
redis.call('SET', KEYS[1], count, 'PX', window)
return {1, count, ttl}
`.trim();

// Takes messages back off a running window, never below 0. A key that is missing or has
// no expiry is no running window (TAKE_SCRIPT starts afresh on it): left alone, since
// DECRBY would create it with no expiry. DECRBY keeps the key's expiry.
const GIVE_BACK_SCRIPT = `
if redis.call('PTTL', KEYS[1]) <= 0 then return 0 end
local left = redis.call('DECRBY', KEYS[1], tonumber(ARGV[1]))
if left < 0 then redis.call('INCRBY', KEYS[1], -left) end
return 1
`.trim();

function toInteger(reply: unknown): number {
  const value = typeof reply === 'number' ? reply : Number.parseInt(String(reply), 10);
  if (!Number.isFinite(value)) throw new TypeError(`RedisBudgetStore: unexpected reply ${String(reply)}`);
  return value;
}

/**
 * A {@link BudgetStore} in Redis: one key per API key, `INCRBY` and `PEXPIRE` run in one
 * Lua script, the give-back in another (each loaded once, run with `EVALSHA`, reloaded if
 * the server forgot it).
 * Needs Redis 2.6 or later. Not for Redis Cluster: `sendCommand` is not told which key a
 * command touches, so a cluster client could not route it.
 */
export class RedisBudgetStore implements BudgetStore {
  readonly #send: SendRedisCommand;
  readonly #script: RedisScript;
  readonly #giveBackScript: RedisScript;
  readonly #prefix: string;

  constructor(options: RedisBudgetStoreOptions) {
    if (typeof options !== 'object' || options === null || typeof options.sendCommand !== 'function') {
      throw new OptionError('RedisBudgetStore: `sendCommand` is required, e.g. (...args) => client.sendCommand(args)');
    }
    if (options.prefix !== undefined && typeof options.prefix !== 'string') {
      throw new OptionError('RedisBudgetStore: `prefix` must be a string');
    }
    this.#send = options.sendCommand;
    this.#script = new RedisScript(options.sendCommand, TAKE_SCRIPT, 'RedisBudgetStore');
    this.#giveBackScript = new RedisScript(options.sendCommand, GIVE_BACK_SCRIPT, 'RedisBudgetStore');
    this.#prefix = options.prefix ?? 'sms-outbox:messages:';
  }

  async take(key: string, count: number, limit: number, windowMs: number): Promise<BudgetTake> {
    const reply = await this.#script.run([this.#prefix + key], [String(count), String(limit), String(windowMs)]);
    if (!Array.isArray(reply) || reply.length !== 3) throw new TypeError('RedisBudgetStore: unexpected script reply');
    const [taken, used, ttl] = reply.map(toInteger) as [number, number, number];
    return { taken: taken === 1, used, resetTime: new Date(Date.now() + ttl) };
  }

  async giveBack(key: string, count: number): Promise<void> {
    await this.#giveBackScript.run([this.#prefix + key], [String(count)]);
  }

  async reset(key: string): Promise<void> {
    await this.#send('DEL', this.#prefix + key);
  }
}
