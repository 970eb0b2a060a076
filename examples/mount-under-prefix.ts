/**
 * Example: the router mounted under a prefix of an existing app, beside the app's own
 * routes and body parser. With `app.use('/sms', sms)` and `basePath: '/v1'`, quick send is
 * `POST /sms/v1/create` and the OpenAPI document `GET /sms/v1/openapi.json`; every other
 * path, under the prefix too, stays the app's.
 *
 * Run it: `npx tsx examples/mount-under-prefix.ts` (on `PORT`, default 3000). In your app,
 * import from `sms-outbox` instead of `../src/index.js`.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createSmsRouter, staticKeys } from '../src/index.js';

/** Starts the app; the router serves `/sms/v1/...`, the app everything else. */
export async function startMountedUnderPrefix(options: { port?: number; apiKey: string }) {
  const sms = createSmsRouter({
    verifyKey: staticKeys([{ key: options.apiKey, id: 'acme', profiles: ['12345'] }]),
    basePath: '/v1',
  });
  const app = express();
  // The router parses its own bodies (its size and nesting limits, its JSON errors); the
  // app's parser goes after it, for the app's own routes.
  app.use('/sms', sms);
  app.use(express.json());
  app.get('/sms/help', (_req, res) => {
    res.json({ docs: '/sms/v1/openapi.json' });
  });
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });

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
  const running = await startMountedUnderPrefix({ port: Number(process.env.PORT || 3000), apiKey: 'example-key' });
  console.log(`listening on ${running.url}; try ${running.url}/sms/v1/openapi.json`);
}
