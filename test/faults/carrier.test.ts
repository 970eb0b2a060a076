/**
 * Carrier faults: a carrier that refuses every submission with a retryable error for a
 * while. Messages are still accepted, stay `queued` (with the error on the status endpoint)
 * and go out once the carrier is back; nothing is lost or doubled.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { outcome, type OutgoingPart } from '../../src/index.js';
import { KEY } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { ScriptedDelivery } from '../helpers/scripted-delivery.js';
import { startFuzzGateway, type FuzzGateway } from '../fuzz/harness.js';

let gateway: FuzzGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

interface StatusView {
  message_ref: string;
  status: string;
  submit_attempts: number;
}

async function statusOf(g: FuzzGateway, externalId: string): Promise<StatusView[]> {
  const answer = await g.send({ method: 'GET', path: `/api/outbox/delivery-status?external_id=${externalId}`, headers: { 'x-api-key': KEY } });
  return JSON.parse(answer.text) as StatusView[];
}

describe('carrier unreachable', () => {
  it('keeps accepted messages queued while the carrier fails, and sends each once when it returns', async () => {
    const carrier = new ScriptedDelivery();
    let down = true;
    const refused: OutgoingPart[] = [];
    carrier.beforeSubmit = (part) => {
      if (down) {
        refused.push(part);
        throw new Error('connect ECONNREFUSED 127.0.0.1:2775');
      }
    };
    gateway = await startFuzzGateway({
      delivery: carrier,
      worker: { pollIntervalMs: 20, retryBaseMs: 20, retryMaxMs: 100, maxAttempts: 1000 },
    });
    const g = gateway;
    const retrying: number[] = [];
    g.sms.on('message.retrying', ({ attempt }) => retrying.push(attempt));

    const body = JSON.stringify({
      profile_code: '12345',
      messages: [
        { recipient: '254712345678', message: 'one', external_id: 'outage' },
        { recipient: '254712345679', message: 'x'.repeat(200), external_id: 'outage' },
      ],
    });
    const accepted = await g.send({ method: 'POST', path: '/api/outbox/create', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body });
    expect(accepted.status).toBe(200);

    // Several rounds of refusals: every message still queued, its attempts counted.
    await eventually(() => retrying.filter((a) => a >= 3).length >= 2);
    const during = await statusOf(g, 'outage');
    expect(during.map((m) => m.status)).toEqual(['queued', 'queued']);
    for (const m of during) expect(m.submit_attempts).toBeGreaterThanOrEqual(3);
    expect(g.requestErrors).toEqual([]);

    down = false;
    const submitted = await eventually(async () => {
      const now = await statusOf(g, 'outage');
      return now.every((m) => m.status === 'submitted') ? now : undefined;
    });
    // Three parts (1 + 2 SMS units), each handed over exactly once after the outage.
    expect(carrier.submitted).toHaveLength(3);
    expect(new Set(carrier.submitted.map((p) => `${p.ref}/${p.index}`)).size).toBe(3);
    expect(refused.length).toBeGreaterThan(0);

    for (const part of carrier.submitted) await carrier.receipt({ carrierId: part.carrierId, outcome: outcome('delivered', 'delivered_to_terminal') });
    await eventually(async () => (await statusOf(g, 'outage')).every((m) => m.status === 'delivered'));
    expect(submitted.map((m) => m.message_ref).sort()).toEqual([...new Set(carrier.submitted.map((p) => p.ref))].sort());
  });

  it('still accepts new requests at full speed while the carrier is down', async () => {
    const carrier = new ScriptedDelivery();
    carrier.beforeSubmit = () => {
      throw new Error('carrier down');
    };
    gateway = await startFuzzGateway({ delivery: carrier, worker: { pollIntervalMs: 20, retryBaseMs: 20, retryMaxMs: 50, maxAttempts: 1000 } });
    const g = gateway;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        g.send({
          method: 'POST',
          path: '/api/outbox/create',
          headers: { 'content-type': 'application/json', 'x-api-key': KEY },
          body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: `m${i}`, external_id: 'down' }] }),
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect((await statusOf(g, 'down')).every((m) => m.status === 'queued')).toBe(true);
  });
});
