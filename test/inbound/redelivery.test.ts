/**
 * An MO the carrier delivers again (its answer lost when the instance that stored it
 * crashed) reaches the customer once, on every bundled storage; a subscriber's STOP, START,
 * STOP still reaches it three times and leaves them opted out.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import type { Receiver } from './receiver.js';
import { gatewayOn, SHORT_CODE } from './gateway-on.js';
import { everyStorageKind } from './storage-kinds.js';

const { kinds, running, receiver: startReceiver } = await everyStorageKind('redelivery test');
let receiver: Receiver | undefined;

const uids = () => new Set(receiver!.received.map((r) => (JSON.parse(r.body) as { uid: string }).uid));
const forwarded = () =>
  receiver!.received.map((r) => (JSON.parse(r.body) as { data: { from: string; message: string } }).data).map((d) => `${d.from} ${d.message}`);

describe.each(kinds)('an MO delivered again by the carrier ($name)', (kind) => {
  it.skipIf(kind.unavailable !== null)('reaches the customer once; STOP, START, STOP each reach it', async () => {
    receiver = await startReceiver();
    let gateway = await gatewayOn(kind.open(), receiver.url);
    running.push(gateway.sms);
    const mo = { from: '254700000071', to: SHORT_CODE, text: 'Count me in' };
    await gateway.delivery.simulateInbound(mo);
    await eventually(() => receiver!.received.length === 1, { what: 'the MO forwarded' });
    if (kind.durable) {
      // The instance stored and forwarded it, then died before answering: the carrier
      // delivers it again, to the instance that takes over.
      await gateway.sms.close();
      running.splice(0);
      gateway = await gatewayOn(kind.open(), receiver.url);
      running.push(gateway.sms);
    }
    await gateway.delivery.simulateInbound({ ...mo, from: `+${mo.from}` });
    for (const text of ['STOP', 'START', 'STOP']) await gateway.delivery.simulateInbound({ from: '254700000072', to: SHORT_CODE, text });

    const stored = await gateway.storage.listInbound!({ limit: 20 });
    await eventually(async () => (await gateway.storage.listInbound!({ limit: 20 })).every((r) => r.callback?.state === 'delivered'), {
      what: 'every stored MO forwarded',
    });
    expect(stored.map((r) => `${r.from} ${r.text}`).reverse()).toEqual([
      '254700000071 Count me in',
      '254700000072 STOP',
      '254700000072 START',
      '254700000072 STOP',
    ]);
    expect(uids().size).toBe(4);
    // Each once; webhooks of different messages may go out in either order (they are sent concurrently).
    expect([...forwarded()].sort()).toEqual(stored.map((r) => `${r.from} ${r.text}`).sort());
    expect(await gateway.sms.optOuts.has(SHORT_CODE, '254700000072')).toBe(true);
  });
});
