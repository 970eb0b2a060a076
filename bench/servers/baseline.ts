/**
 * Baseline server: a bare Express 5 app with `express.json()` and a POST route on the
 * router's path that answers a JSON array of one item per message (one item for the
 * one-message body), with no storage and no worker. Whatever the router costs on top of
 * Express is measured against this, in the same run.
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import { serve } from './host.js';

interface Body {
  messages?: { recipient?: string; external_id?: string }[];
}

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/api/outbox/create', (req, res) => {
  const messages = (req.body as Body).messages ?? [];
  res.json(
    messages.map((m) => ({ external_id: m.external_id ?? '', recipient: m.recipient ?? '', sms_count: 1, message_ref: randomUUID() })),
  );
});
serve(app);
