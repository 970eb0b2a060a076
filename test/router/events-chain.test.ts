/**
 * `sms.on`, `once` and `off` return the router, so subscriptions chain, and never the
 * emitter behind them: a host cannot emit the router's events or remove its own listeners.
 */
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { MessageAcceptedEvent, MessageStatusEvent, SmsRouter } from '../../src/index.js';
import { createGateway, quickSend, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

describe('sms.on / once / off', () => {
  it('return the router itself, so calls chain, and the listeners chained on hear their events', async () => {
    gateway = createGateway();
    const { sms } = gateway;
    const accepted: MessageAcceptedEvent[] = [];
    const firstStatus: MessageStatusEvent[] = [];
    const dropped = () => {
      throw new Error('unsubscribed listener was called');
    };
    const returned = sms
      .on('message.accepted', (event) => accepted.push(event))
      .once('message.status', (event) => firstStatus.push(event))
      .on('message.accepted', dropped)
      .off('message.accepted', dropped);
    expect(returned).toBe(sms);
    expectTypeOf(returned).toEqualTypeOf<SmsRouter>();

    await quickSend(gateway.app);
    await quickSend(gateway.app);
    await eventually(() => accepted.length === 2);
    // `once`: the first transition only, though each message makes two or more.
    await eventually(() => firstStatus.length === 1);
    expect(firstStatus[0]?.previousState).toBe('queued');
  });

  it('give no way to the emitter: no `emit` or `removeAllListeners` on what they return', () => {
    gateway = createGateway();
    const returned: object = gateway.sms.on('error', () => undefined);
    expect('emit' in returned).toBe(false);
    expect('removeAllListeners' in returned).toBe(false);
    expect('listeners' in returned).toBe(false);
  });

  it('type each listener\u2019s payload from the event name and refuse unknown names', () => {
    gateway = createGateway();
    gateway.sms.on('carrier.connection', (change) => {
      expectTypeOf(change.bind).toEqualTypeOf<string>();
      if (change.state === 'unbound') expectTypeOf(change.attempt).toEqualTypeOf<number>();
    });
    gateway.sms.on('request.rejected', (event) => {
      expectTypeOf(event.requestId).toEqualTypeOf<string | number | undefined>();
    });
    // @ts-expect-error: no such event
    gateway.sms.on('message.acepted', () => undefined);
    // @ts-expect-error: `off` needs the listener; the router's own listeners stay
    gateway.sms.off('message.accepted');
  });
});
