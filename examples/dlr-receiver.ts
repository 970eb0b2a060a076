/**
 * Example: a customer's delivery report receiver. It verifies the Standard Webhooks
 * signature with the `standardwebhooks` package over the raw body, drops duplicates by
 * `uid` (reports are delivered at least once), and answers 2xx quickly.
 *
 * Run it: `DLR_SECRET=whsec_... npx tsx examples/dlr-receiver.ts` (on `PORT`, default 4000). In
 * your app, import the `DlrPayload` type from `sms-outbox` (or declare the shape yourself).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { Webhook } from 'standardwebhooks';
import type { DlrPayload } from '../src/index.js';

/** Starts a receiver at `<url>/dlr` that hands each new, verified report to `onReport`. */
export async function startDlrReceiver(options: { port?: number; secret: string; onReport: (report: DlrPayload) => void }) {
  const webhook = new Webhook(options.secret);
  // In production keep the seen ids in your database, for longer than the retry schedule.
  const seen = new Set<string>();
  const app = express();

  // The signature covers the exact bytes sent, so read the body raw, not parsed.
  app.post('/dlr', express.raw({ type: 'application/json' }), (req, res) => {
    let report: DlrPayload;
    try {
      // Also refuses a timestamp more than 5 minutes off, which stops replays.
      report = webhook.verify(req.body as Buffer, req.headers as Record<string, string>) as DlrPayload;
    } catch {
      res.status(401).json({ error: 'bad signature' });
      return;
    }
    if (!seen.has(report.uid)) {
      seen.add(report.uid);
      options.onReport(report);
    }
    res.sendStatus(204);
  });

  const server = app.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const receiver = await startDlrReceiver({
    port: Number(process.env.PORT || 4000),
    secret: process.env.DLR_SECRET ?? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    onReport: ({ data }) => console.log(`${data.message_ref} ${data.status} (${data.status_reason ?? '-'})`),
  });
  console.log(`delivery reports to ${receiver.url}/dlr`);
}
