import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { signWebhook, signingKey } from '../../src/dlr/sign.js';

// The reference vector of the Standard Webhooks test suites (and Svix's documentation).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

function signedHeaders(secret: string, id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}

describe('signWebhook', () => {
  it('reproduces the published Standard Webhooks test vector', () => {
    expect(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('changes when any signed part changes', () => {
    const base = signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body);
    expect(signWebhook(VECTOR.secret, 'msg_other', VECTOR.timestamp, VECTOR.body)).not.toBe(base);
    expect(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp + 1, VECTOR.body)).not.toBe(base);
    expect(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, '{"test":2432232314}')).not.toBe(base);
  });

  it('verifies with the standardwebhooks package, whsec_ secret', () => {
    const secret = `whsec_${Buffer.from('a secret of at least twenty-four bytes').toString('base64')}`;
    const id = 'a0b1c2d3-uid';
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ uid: id, data: { text: 'caf\u00e9 \u{1F600}' } });
    const headers = signedHeaders(secret, id, timestamp, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });

  it('uses a secret without the whsec_ prefix as raw bytes (receiver: format raw)', () => {
    const secret = 'plain-ascii-secret-for-dev';
    const id = 'uid-raw';
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"a":1}';
    const headers = signedHeaders(secret, id, timestamp, body);
    expect(new Webhook(secret, { format: 'raw' }).verify(body, headers)).toEqual({ a: 1 });
  });

  it('rejects an empty secret and a whsec_ secret that is not base64', () => {
    expect(() => signingKey('')).toThrow(TypeError);
    expect(() => signingKey('whsec_')).toThrow(TypeError);
    expect(() => signingKey('whsec_not base64!')).toThrow(/base64/);
  });
});
