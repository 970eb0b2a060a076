/**
 * `sms.on`, `once` and `off` return the router, so subscriptions chain, and never the
 * emitter behind them: a host cannot emit the router's events or remove its own listeners.
 */
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { SMS_EVENT_NAMES, type MessageAcceptedEvent, type MessageStatusEvent, type SmsEventName, type SmsRouter } from '../../src/index.js';
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
    // @ts-expect-error: no such event (and refused at run time too)
    expect(() => gateway!.sms.on('message.acepted', () => undefined)).toThrow(TypeError);
    // @ts-expect-error: `off` needs the listener; the router's own listeners stay
    gateway.sms.off('message.accepted');
  });

  // Plain JavaScript has no type check: a misspelt name would wait forever for an event
  // that is never emitted, so it is refused as an option typo is, with the name it is near.
  it('throw a TypeError for an unknown event name, suggesting the nearest one', () => {
    gateway = createGateway();
    const sms = gateway.sms as unknown as Record<'on' | 'once' | 'off', (name: unknown, listener: () => void) => unknown>;
    const listener = () => undefined;
    for (const method of ['on', 'once', 'off'] as const) {
      expect(() => sms[method]('message.acepted', listener)).toThrow(
        new TypeError(`${method}: unknown event "message.acepted". Did you mean "message.accepted"?`),
      );
      expect(() => sms[method]('dlr.send', listener)).toThrow(/^\w+: unknown event "dlr\.send"\. Did you mean "dlr\.sent"\?$/);
      expect(() => sms[method]('something else entirely', listener)).toThrow(
        new TypeError(`${method}: unknown event "something else entirely".`),
      );
      expect(() => sms[method](Symbol('x'), listener)).toThrow(TypeError);
    }
    // Every name of the event map is taken, and only those.
    for (const name of SMS_EVENT_NAMES) expect(() => gateway!.sms.on(name, listener).off(name, listener)).not.toThrow();
    expectTypeOf<(typeof SMS_EVENT_NAMES)[number]>().toEqualTypeOf<SmsEventName>();
  });
});
