/**
 * A NUL character in an MO's text or addresses: every bundled storage keeps and forwards the
 * message the same way, each NUL as U+FFFD (the carrier is answered, nothing fails, no
 * `error` event), so no storage refuses what another keeps and no carrier redelivers forever.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import type { Receiver } from './receiver.js';
import { gatewayOn, SHORT_CODE } from './gateway-on.js';
import { everyStorageKind } from './storage-kinds.js';

const { kinds, running, receiver: startReceiver } = await everyStorageKind('NUL test');
let receiver: Receiver | undefined;

describe.each(kinds)('an MO with a NUL in it ($name)', (kind) => {
  it.skipIf(kind.unavailable !== null)('is stored and forwarded with U+FFFD for each NUL, and nothing fails', async () => {
    receiver = await startReceiver();
    const gateway = await gatewayOn(kind.open(), receiver.url);
    running.push(gateway.sms);
    const errors: unknown[] = [];
    gateway.sms.on('error', (e) => errors.push(e));
    await gateway.delivery.simulateInbound({ from: '25470000\u00000081', to: SHORT_CODE, text: 'nul\u0000inside\u0000' });
    await gateway.delivery.simulateInbound({ from: '254700000082', to: `${SHORT_CODE}\u0000`, text: 'to a code with a nul' });

    await eventually(() => receiver!.received.length === 1, { what: 'the MO forwarded' });
    const data = (JSON.parse(receiver.received[0]!.body) as { data: Record<string, string> }).data;
    expect(data).toMatchObject({ from: '25470000\uFFFD0081', to: SHORT_CODE, message: 'nul\uFFFDinside\uFFFD' });
    const stored = await gateway.storage.listInbound!({ limit: 10 });
    expect(stored.map((r) => [r.from, r.to, r.text])).toEqual([
      ['254700000082', `${SHORT_CODE}\uFFFD`, 'to a code with a nul'],
      ['25470000\uFFFD0081', SHORT_CODE, 'nul\uFFFDinside\uFFFD'],
    ]);
    expect(errors).toEqual([]);
  });
});
