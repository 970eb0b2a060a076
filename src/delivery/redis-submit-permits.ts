/**
 * `RedisSubmitPermits`: one carrier account's submit rate, shared by every instance through
 * Redis (or Valkey). A carrier contracts a rate per account, not per process: two instances
 * that each paced themselves at it would together send twice as much and be throttled.
 *
 * The rate is a schedule in one key (GCRA): each permit reserves the next free slot of the
 * account's timeline, `1 / tps` seconds after the one before, in one Lua script run
 * atomically with the server's clock, so instances with skewed clocks agree. It takes the
 * same `sendCommand` function as `RedisBudgetStore` and rate-limit-redis, so one client of
 * the host serves all three and this package depends on no Redis library.
 */
import { OptionError } from '../errors.js';
import { RedisScript, type SendRedisCommand } from '../util/redis-script.js';

/** Permits to submit at an account's rate: what a paced adapter asks before each submit. */
export interface SubmitPermits {
  /** The account's submits per second, across every instance. */
  readonly tps: number;
  /**
   * Reserves the next free slot; resolves with the ms to wait before submitting in it (0:
   * now). Rejects when the store cannot be reached (the caller paces itself meanwhile).
   */
  reserve(): Promise<number>;
}

/** Options of {@link RedisSubmitPermits}. */
export interface RedisSubmitPermitsOptions {
  /**
   * Sends a raw command and resolves with its reply: node-redis
   * `(...args) => client.sendCommand(args)`, ioredis `(command, ...args) => client.call(command, ...args)`.
   */
  sendCommand: SendRedisCommand;
  /** The key of the account's schedule: the same for every instance that shares the account. */
  key: string;
  /** The account's submits per second, across every instance. */
  tps: number;
  /**
   * How far ahead of now a slot may be reserved, ms: past it, `reserve` waits before it
   * reserves, so a backlog does not book the timeline minutes ahead. Default 1000.
   */
  maxAheadMs?: number;
}

// Times in microseconds of the server's clock; the schedule's next free slot is the key's
// value, written with %.0f since Lua's tostring would round a 16-digit number. Replies
// {1, us to wait} when a slot was reserved, {0, us until one may be} when the timeline is
// booked past maxAhead. The key expires a second after its last reserved slot.
const RESERVE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local ahead = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - now
if wait > ahead then return {0, math.ceil(wait - ahead)} end
local following = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', following), 'PX', math.ceil((following - now) / 1000) + 1000)
return {1, math.floor(wait)}
`.trim();

/**
 * {@link SubmitPermits} in Redis. Needs Redis 5 or later (the script reads the server's
 * clock). Not for Redis Cluster, as `RedisBudgetStore`. Give `SmppDelivery` the
 * `sharedRate` option rather than one of these; an adapter of your own calls `acquire()`
 * before each submit.
 */
export class RedisSubmitPermits implements SubmitPermits {
  readonly tps: number;
  readonly #script: RedisScript;
  readonly #key: string;
  readonly #intervalUs: string;
  readonly #maxAheadUs: string;

  /** Checks the options; throws an `OptionError` on a missing or bad one. */
  constructor(options: RedisSubmitPermitsOptions) {
    if (typeof options !== 'object' || options === null || typeof options.sendCommand !== 'function') {
      throw new OptionError('RedisSubmitPermits: `sendCommand` is required, e.g. (...args) => client.sendCommand(args)');
    }
    if (typeof options.key !== 'string' || options.key === '') throw new OptionError('RedisSubmitPermits: `key` must be a non-empty string');
    if (typeof options.tps !== 'number' || !(options.tps > 0) || !Number.isFinite(options.tps)) {
      throw new OptionError(`RedisSubmitPermits: \`tps\` must be a positive number, got ${String(options.tps)}`);
    }
    const maxAheadMs = options.maxAheadMs ?? 1_000;
    if (typeof maxAheadMs !== 'number' || !(maxAheadMs >= 0) || !Number.isFinite(maxAheadMs)) {
      throw new OptionError(`RedisSubmitPermits: \`maxAheadMs\` must be a number of ms, got ${String(maxAheadMs)}`);
    }
    this.tps = options.tps;
    this.#script = new RedisScript(options.sendCommand, RESERVE_SCRIPT, 'RedisSubmitPermits');
    this.#key = options.key;
    this.#intervalUs = String(1e6 / options.tps);
    this.#maxAheadUs = String(Math.round(maxAheadMs * 1000));
  }

  /** Reserves the next free slot of the key's schedule; resolves with the ms to wait for it. */
  async reserve(): Promise<number> {
    for (;;) {
      const [reserved, us] = await this.#run();
      if (reserved) return us / 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, us / 1000)).unref());
    }
  }

  /** Waits until this caller may submit one part at the shared rate. */
  async acquire(): Promise<void> {
    const waitMs = await this.reserve();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }

  async #run(): Promise<[boolean, number]> {
    const reply = await this.#script.run([this.#key], [this.#intervalUs, this.#maxAheadUs]);
    if (!Array.isArray(reply) || reply.length !== 2) throw new TypeError('RedisSubmitPermits: unexpected script reply');
    const [reserved, us] = reply.map((value) => Number(value)) as [number, number];
    if (!Number.isFinite(us)) throw new TypeError('RedisSubmitPermits: unexpected script reply');
    return [reserved === 1, us];
  }
}
