/**
 * What a caller sees of the recipient stage: refused numbers answered 422 with a code and
 * nothing stored, national numbers of a profile's country accepted and echoed as sent, and
 * the status answer carrying both writings, the country and the line type.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage, staticKeys, staticProfiles, type SmsRouter } from '../../src/index.js';
import { statusView } from '../../src/http/status.js';
import { createGateway, KEY } from '../helpers/gateway.js';
import { buildNewMessage } from '../../src/testing/storage-suite/fixtures.js';

const RELAXED_KEY = 'test-key-relaxed';

const keys = staticKeys([
  { key: KEY, id: 'acme' },
  { key: RELAXED_KEY, id: 'relaxed', numbers: 'digits' },
]);

const profiles = staticProfiles([
  { code: '12345', owners: ['acme', 'relaxed'] },
  { code: 'kenya', owners: ['acme'], defaultCountry: 'KE' },
  { code: 'landlines', owners: ['acme'], numbers: 'valid' },
]);

let gateway: SmsRouter | null = null;
afterEach(async () => {
  await gateway?.close();
  gateway = null;
});

function setUp() {
  const storage = new MemoryStorage();
  const { app, sms } = createGateway({ verifyKey: keys, resolveProfile: profiles, storage });
  gateway = sms;
  const quick = (profile: string, recipients: string[], key = KEY) =>
    request(app)
      .post('/api/outbox/create')
      .set('X-API-Key', key)
      .send({ profile_code: profile, messages: recipients.map((recipient, i) => ({ recipient, message: 'Hi', external_id: `n-${i}` })) });
  const premiumList = (profile: string, to: string[]) =>
    request(app).post('/api/outbox/premium').set('X-API-Key', KEY).send({ profile_code: profile, to, message: 'Hi', message_id: 'list-1' });
  const status = (ref: string) => request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY).expect(200);
  const storedFor = async (principal: string, ids: string[]) => (await Promise.all(ids.map((id) => storage.findByExternalId(principal, id, 10)))).flat();
  return { quick, premiumList, status, storedFor };
}

describe('recipients under the default policy', () => {
  it.each([
    ['254000000000', 'INVALID_RECIPIENT', 'is not a number in use for KE'],
    ['2547123456789', 'INVALID_RECIPIENT', 'is not a number in use for KE'],
    ['442073238299', 'NOT_MOBILE', 'is a fixed line number for GB, which cannot take SMS'],
  ])('%s is refused with %s, naming the item, and nothing of the request is stored', async (bad, code, problem) => {
    const { quick, storedFor } = setUp();
    const res = await quick('12345', ['254712345678', bad]).expect(422);
    expect(res.body).toEqual({ details: `messages[1].recipient: ${problem}`, code });
    expect(await storedFor('acme', ['n-0', 'n-1'])).toEqual([]);
  });

  it('names the number of the list form by its index in `to`', async () => {
    const { premiumList } = setUp();
    const res = await premiumList('12345', ['254712345678', '2348031234567', '49301234567']).expect(422);
    expect(res.body).toEqual({ details: 'to[2]: is a fixed line number for DE, which cannot take SMS', code: 'NOT_MOBILE' });
  });

  it('accepts real mobiles of Kenya, Nigeria, India, the UK, the US and Germany', async () => {
    const { quick } = setUp();
    const numbers = ['254712345678', '2348031234567', '919876543210', '447400123456', '12025550123', '4915123456789'];
    const res = await quick('12345', numbers).expect(200);
    expect(res.body.map((item: { recipient: string }) => item.recipient)).toEqual(numbers);
  });

  it('keeps the seed format answer for a number written otherwise, without a default country', async () => {
    const { quick } = setUp();
    const res = await quick('12345', ['0712345678']).expect(422);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details).toMatch(/^messages\[0\]\.recipient: must start with the country code, not 0/);
  });

  it('a profile with numbers: valid takes a landline', async () => {
    const { quick } = setUp();
    await quick('landlines', ['442073238299']).expect(200);
  });

  it("a principal's numbers: digits takes what the seed took", async () => {
    const { quick } = setUp();
    await quick('12345', ['254000000000'], RELAXED_KEY).expect(200);
  });
});

describe('a profile with a default country', () => {
  it('accepts the national, the spaced international and the seed writing, stores one, echoes each', async () => {
    const { quick, status } = setUp();
    const written = ['0712345678', '+254 712 345 678', '254712345678'];
    const res = await quick('kenya', written).expect(200);
    expect(res.body.map((item: { recipient: string }) => item.recipient)).toEqual(written);
    for (const item of res.body as { message_ref: string }[]) {
      const view = (await status(item.message_ref)).body;
      expect(view).toMatchObject({ normalized_recipient: '254712345678', country: 'KE', number_type: 'mobile' });
    }
  });

  it('the status answer echoes the writing the record keeps, beside the stored digits', () => {
    const record = { ...buildNewMessage({ recipient: '254712345678' }), recipientAsSent: '0712345678', country: 'KE', numberType: 'mobile' };
    const view = statusView({ ...record, state: 'queued', statusReason: null, statusDescription: null, attempts: 0, lastError: null, updatedAt: 0, parts: [], callback: null });
    expect(view).toMatchObject({ recipient: '0712345678', normalized_recipient: '254712345678', country: 'KE', number_type: 'mobile' });
  });

  it('refuses a national number that is no number in use there', async () => {
    const { quick } = setUp();
    const res = await quick('kenya', ['0700 000']).expect(422);
    expect(res.body.code).toBe('INVALID_RECIPIENT');
  });
});

describe('the status answer', () => {
  it('carries the country and line type of a seed-format recipient', async () => {
    const { quick, status } = setUp();
    const [item] = (await quick('12345', ['12025550123']).expect(200)).body;
    expect((await status(item.message_ref)).body).toMatchObject({
      recipient: '12025550123',
      normalized_recipient: '12025550123',
      country: 'US',
      number_type: 'fixed_line_or_mobile',
    });
  });
});
