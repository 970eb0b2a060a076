/**
 * A Lua script run in Redis (or Valkey) through the host's own `sendCommand`, so this
 * package depends on no Redis library: loaded once with `SCRIPT LOAD`, then run by its hash
 * with `EVALSHA`, which sends a few bytes rather than the script each time.
 *
 * @module
 */

/** Sends one raw command, e.g. `(...args) => client.sendCommand(args)` with node-redis. */
export type SendRedisCommand = (...args: string[]) => Promise<unknown>;

const isNoScript = (error: unknown): boolean => error instanceof Error && /^NOSCRIPT\b/.test(error.message);

/** One Lua script of one owner, run with `EVALSHA` and loaded again when the server forgot it. */
export class RedisScript {
  readonly #send: SendRedisCommand;
  readonly #source: string;
  readonly #owner: string;
  #sha: Promise<string> | null = null;

  /** `owner` names the class that runs it, in the errors of a reply it cannot read. */
  constructor(send: SendRedisCommand, source: string, owner: string) {
    this.#send = send;
    this.#source = source;
    this.#owner = owner;
  }

  /** Runs the script on `keys` with `args`; resolves with the server's reply as it came. */
  async run(keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const params = [String(keys.length), ...keys, ...args];
    try {
      return await this.#send('EVALSHA', await this.#sha1(), ...params);
    } catch (error) {
      // The server lost its script cache (restart, SCRIPT FLUSH, failover): load it again.
      if (!isNoScript(error)) throw error;
      this.#sha = null;
      return this.#send('EVALSHA', await this.#sha1(), ...params);
    }
  }

  #sha1(): Promise<string> {
    this.#sha ??= this.#send('SCRIPT', 'LOAD', this.#source).then((sha) => {
      if (typeof sha !== 'string') throw new TypeError(`${this.#owner}: unexpected SCRIPT LOAD reply`);
      return sha;
    });
    const loading = this.#sha;
    // A failed load is not remembered, so the next call tries again.
    loading.catch(() => {
      if (this.#sha === loading) this.#sha = null;
    });
    return loading;
  }
}
