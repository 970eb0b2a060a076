import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, type ErrorCode, type NewMessage } from '../../src/index.js';
import { createGateway, DISABLED_KEY, KEY, OTHER_KEY, QUICK_ONLY_KEY, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
afterEach(async () => {
  await gateway?.sms.close();
});

const valid = (overrides: Record<string, unknown> = {}) => ({
  profile_code: '12345',
  messages: [{ recipient: '254712345678', message: 'Hello', external_id: 'e-1' }],
  ...overrides,
});

function post(path: string, key: string | null, body: unknown, type = 'application/json') {
  const req = request(gateway.app).post(`/api/outbox/${path}`).set('Content-Type', type);
  if (key !== null) req.set('X-API-Key', key);
  return req.send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** Every error answer is exactly `{ details: string, code: string }`, in that order. */
function expectError(res: request.Response, status: number, code: ErrorCode, details: string | RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['details', 'code']);
  expect(res.body.code).toBe(code);
  if (typeof details === 'string') expect(res.body.details).toBe(details);
  else expect(res.body.details).toMatch(details);
}

describe('the error table of README.md#errors', () => {
  it('400 for a body that is not valid JSON', async () => {
    gateway = createGateway();
    expectError(await post('create', KEY, '{"profile_code": '), 400, 'INVALID_JSON', 'Body is not valid JSON');
  });

  it('401 with WWW-Authenticate when the key is missing or wrong', async () => {
    gateway = createGateway();
    const missing = await post('create', null, valid());
    expectError(missing, 401, 'MISSING_API_KEY', 'Missing X-API-Key header');
    expect(missing.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    const wrong = await post('create', 'not-a-key', valid());
    expectError(wrong, 401, 'INVALID_API_KEY', 'Invalid API key');
    expect(wrong.headers['www-authenticate']).toBeDefined();
  });

  it('403 for a disabled key and for a key without the premium scope', async () => {
    gateway = createGateway();
    expectError(await post('create', DISABLED_KEY, valid()), 403, 'KEY_DISABLED', 'API key is disabled');
    const premium = { profile_code: '12345', messages: [{ mobile_number: '254712345678', message: 'x' }] };
    expectError(await post('premium', QUICK_ONLY_KEY, premium), 403, 'SCOPE_DENIED', 'API key may not use the premium endpoint');
    expect((await post('create', QUICK_ONLY_KEY, valid())).status).toBe(200);
  });

  it("404 for a ref that does not exist or is someone else's", async () => {
    gateway = createGateway();
    const sent = await post('create', KEY, valid());
    const ref = sent.body[0].message_ref;
    expectError(await request(gateway.app).get('/api/outbox/delivery-status/nope').set('X-API-Key', KEY), 404, 'NOT_FOUND', 'Message not found');
    expectError(await request(gateway.app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', OTHER_KEY), 404, 'NOT_FOUND', 'Message not found');
    const others = await request(gateway.app).get('/api/outbox/delivery-status').query({ external_id: 'e-1' }).set('X-API-Key', OTHER_KEY);
    expect(others.body).toEqual([]);
  });

  it('413 for a body over limits.maxBodyBytes', async () => {
    gateway = createGateway({ limits: { maxBodyBytes: 1000 } });
    expectError(await post('create', KEY, valid({ padding: 'x'.repeat(2000) })), 413, 'BODY_TOO_LARGE', 'Body is larger than 1000 bytes');
  });

  it('415 for a Content-Type that is not JSON', async () => {
    gateway = createGateway();
    expectError(await post('create', KEY, JSON.stringify(valid()), 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    expectError(await post('create', KEY, 'a=b', 'application/x-www-form-urlencoded'), 415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    expect((await post('create', KEY, valid(), 'application/json; charset=utf-8')).status).toBe(200);
  });

  it('422 "Invalid Profile Code" for an unknown profile and for one the key does not own', async () => {
    gateway = createGateway();
    expectError(await post('create', KEY, valid({ profile_code: '00000' })), 422, 'INVALID_PROFILE', 'Invalid Profile Code');
    expectError(await post('create', KEY, valid({ profile_code: '99999' })), 422, 'INVALID_PROFILE', 'Invalid Profile Code');
  });

  it('422 naming the field for each validation rule', async () => {
    gateway = createGateway({ limits: { maxMessagesPerRequest: 5, maxSegments: 2 } });
    const item = (recipient: string, message = 'x') => ({ recipient, message });
    const cases: [unknown, string | RegExp][] = [
      [{ profile_code: '12345', messages: [item('254712345678'), item('254712345678'), item('254712345678'), item('+254712345678')] }, /^messages\[3\]\.recipient: must not start with "\+"/],
      [valid({ messages: [item('0712345678')] }), /^messages\[0\]\.recipient: must start with the country code, not 0/],
      [valid({ messages: [item('254 712 345 678')] }), /^messages\[0\]\.recipient: must not contain spaces/],
      [valid({ messages: [item('2547')] }), /^messages\[0\]\.recipient: must be 8 to 15 digits/],
      [valid({ messages: [item('254712345678', '')] }), 'messages[0].message: must not be empty'],
      [valid({ messages: [item('254712345678', 'a\ud800b')] }), 'messages[0].message: contains a lone UTF-16 surrogate'],
      [valid({ messages: [item('254712345678', 'x'.repeat(307))] }), 'messages[0].message: needs 3 SMS units, more than the limit of 2'],
      [valid({ messages: [{ message: 'x' }] }), 'messages[0].recipient: is required'],
      [valid({ messages: [{ recipient: '254712345678', message: 'x', message_type: 'one' }] }), 'messages[0].message_type: must be an integer'],
      [valid({ messages: [] }), 'messages: must have at least 1 item'],
      [valid({ messages: Array.from({ length: 6 }, () => item('254712345678')) }), 'messages: must have at most 5 items'],
      [{ messages: [item('254712345678')] }, 'profile_code: is required'],
      [[valid()], 'body: must be a JSON object'],
      [valid({ dlr_callback_url: 'ftp://example.com/x' }), /^dlr_callback_url: /],
      [valid({ dlr_callback_url: 'http://user:pass@example.com/x' }), /^dlr_callback_url: /],
      [valid({ dlr_callback_url: 'http://127.1/x' }), /^dlr_callback_url: /],
    ];
    for (const [body, details] of cases) expectError(await post('create', KEY, body), 422, 'VALIDATION_FAILED', details);
  });

  it('500 exactly "500 server-error" when storage fails, with the cause on the error event only', async () => {
    const storage = new MemoryStorage();
    storage.insertMessages = async () => {
      throw new Error('disk on fire at /var/lib/secret.db');
    };
    gateway = createGateway({ storage });
    const errors: unknown[] = [];
    gateway.sms.on('error', ({ error }) => errors.push(error));
    const res = await post('create', KEY, valid());
    expectError(res, 500, 'SERVER_ERROR', '500 server-error');
    expect(JSON.stringify(res.body)).not.toContain('disk');
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain('disk on fire');
  });
});

describe('atomic requests', () => {
  it('stores nothing of a request with one bad message among good ones', async () => {
    const storage = new MemoryStorage();
    const inserted: NewMessage[][] = [];
    const insert = storage.insertMessages.bind(storage);
    storage.insertMessages = async (messages, lease) => {
      inserted.push([...messages]);
      return insert(messages, lease);
    };
    gateway = createGateway({ storage });
    const body = { profile_code: '12345', messages: [
      { recipient: '254712345678', message: 'ok', external_id: 'atom' },
      { recipient: '254712345678', message: 'ok', external_id: 'atom' },
      { recipient: 'bad', message: 'ok', external_id: 'atom' },
    ] };
    expect((await post('create', KEY, body)).status).toBe(422);
    expect(inserted).toEqual([]);
    const found = await request(gateway.app).get('/api/outbox/delivery-status').query({ external_id: 'atom' }).set('X-API-Key', KEY);
    expect(found.body).toEqual([]);
  });
});

describe('request.rejected', () => {
  it('is emitted for each 4xx with its status and details', async () => {
    gateway = createGateway();
    const rejected: { status: number; details: string; endpoint: string | null }[] = [];
    gateway.sms.on('request.rejected', (e) => rejected.push(e));
    await post('create', 'wrong', valid());
    await post('premium', KEY, valid({ profile_code: 'nope' }));
    expect(rejected).toEqual([
      expect.objectContaining({ status: 401, details: 'Invalid API key', endpoint: 'quick' }),
      expect.objectContaining({ status: 422, endpoint: 'premium' }),
    ]);
  });
});
