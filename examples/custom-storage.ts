/**
 * Example: a storage adapter of your own. `CallLogStorage` wraps any other storage and
 * reports each call with its duration: a template for an adapter over your own database,
 * and proof that the contract suite (`sms-outbox/testing`) runs on third-party adapters.
 *
 * Run it: `npx tsx examples/custom-storage.ts` (on `PORT`, default 3000). In your app, import
 * from `sms-outbox` instead of `../src/index.js`.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import {
  createSmsRouter,
  MemoryStorage,
  OPTIONAL_STORAGE_METHODS,
  staticKeys,
  type CallbackAttempt,
  type ClaimOptions,
  type Outcome,
  type PartReceipt,
  type Storage,
} from '../src/index.js';

/** One storage call: which method, how long it took, whether it threw. */
export interface StorageCall {
  method: string;
  ms: number;
  failed: boolean;
}

/** The optional methods, typed as the contract has them (declaration merging with the class). */
export interface CallLogStorage extends Pick<Storage, (typeof OPTIONAL_STORAGE_METHODS)[number]> {}

/** A {@link Storage} that passes every call to `inner` and reports it to `log`. */
export class CallLogStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly log: (call: StorageCall) => void,
  ) {
    // Each optional method only when `inner` has it: a wrapper that always offered them would
    // claim what it cannot do, and the router turns a feature off for a storage without it.
    for (const name of OPTIONAL_STORAGE_METHODS) {
      const method = inner[name] as ((...args: unknown[]) => Promise<unknown>) | undefined;
      if (typeof method !== 'function') continue;
      (this as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => this.#call(name, () => method.apply(inner, args));
    }
  }

  async #call<T>(method: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let failed = false;
    try {
      return await work();
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      this.log({ method, ms: performance.now() - started, failed });
    }
  }

  ready = () => this.#call('ready', async () => this.inner.ready?.());
  close = () => this.#call('close', async () => this.inner.close?.());
  insertMessages = (...args: Parameters<Storage['insertMessages']>) =>
    this.#call('insertMessages', () => this.inner.insertMessages(...args));
  claimMessages = (options: ClaimOptions) => this.#call('claimMessages', () => this.inner.claimMessages(options));
  recordSubmission = (ref: string, index: number, carrierId: string, now: number) =>
    this.#call('recordSubmission', () => this.inner.recordSubmission(ref, index, carrierId, now));
  reschedule = (ref: string, nextAttemptAt: number, error: string, now: number) =>
    this.#call('reschedule', () => this.inner.reschedule(ref, nextAttemptAt, error, now));
  finish = (ref: string, outcome: Outcome, now: number) => this.#call('finish', () => this.inner.finish(ref, outcome, now));
  expireOverdue = (before: number, limit: number, outcome: Outcome, now: number) =>
    this.#call('expireOverdue', () => this.inner.expireOverdue(before, limit, outcome, now));
  applyReceipt = (receipt: PartReceipt) => this.#call('applyReceipt', () => this.inner.applyReceipt(receipt));
  getMessage = (principalId: string, ref: string) => this.#call('getMessage', () => this.inner.getMessage(principalId, ref));
  findByExternalId = (principalId: string, externalId: string, limit: number) =>
    this.#call('findByExternalId', () => this.inner.findByExternalId(principalId, externalId, limit));
  claimCallbacks = (options: ClaimOptions) => this.#call('claimCallbacks', () => this.inner.claimCallbacks(options));
  deferCallbacks = (uids: readonly string[], until: number) =>
    this.#call('deferCallbacks', () => this.inner.deferCallbacks(uids, until));
  recordCallbackAttempt = (uid: string, attempt: CallbackAttempt) =>
    this.#call('recordCallbackAttempt', () => this.inner.recordCallbackAttempt(uid, attempt));
  purge = (before: number, limit: number) => this.#call('purge', () => this.inner.purge(before, limit));
}

/** Starts a gateway on `CallLogStorage` over memory; `log` gets every storage call. */
export async function startWithCustomStorage(options: { port?: number; apiKey: string; log: (call: StorageCall) => void }) {
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: options.apiKey, id: 'acme', profiles: ['12345'] }]),
    storage: new CallLogStorage(new MemoryStorage(), options.log),
  });
  const app = express();
  app.use(sms);
  const server = app.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      await sms.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // Slow calls only: the worker's idle polls would fill the screen.
  const running = await startWithCustomStorage({
    port: Number(process.env.PORT || 3000),
    apiKey: 'example-key',
    log: (call) => call.ms > 5 && console.log(`storage.${call.method} took ${call.ms.toFixed(1)} ms`),
  });
  console.log(`listening on ${running.url} (X-API-Key: example-key)`);
}
