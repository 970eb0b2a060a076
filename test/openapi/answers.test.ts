/**
 * The check every test's gateway answers go through (test/helpers/answers.ts): that it
 * catches an answer the OpenAPI document does not describe, and that the gateways the test
 * helpers build are really checked.
 */
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { answerCheck, answerProblems, answerStats, recordAnswers, type RecordedAnswer } from '../helpers/answers.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';

const REF = '0193f1d2-8c4e-7a10-9b2f-4d5e6f708192';
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/** An answer of the router at the default base path. */
function answer(overrides: Partial<RecordedAnswer>): RecordedAnswer {
  return { method: 'POST', url: '/api/outbox/create', status: 200, headers: JSON_TYPE, body: '[]', ...overrides };
}

const accepted = JSON.stringify([{ external_id: 'a', recipient: '254712345678', sms_count: 1, message_ref: REF }]);

describe('answerCheck', () => {
  const check = answerCheck({ basePath: '/api/outbox' });

  it('passes answers the document describes', () => {
    expect(check(answer({ body: accepted }))).toBeNull();
    expect(
      check(
        answer({
          status: 401,
          headers: { ...JSON_TYPE, 'www-authenticate': 'ApiKey header="X-API-Key"' },
          body: JSON.stringify({ details: 'Invalid API key', code: 'INVALID_API_KEY' }),
        }),
      ),
    ).toBeNull();
    // Another method on a described path: the 405 its operations list.
    const refused = JSON.stringify({ details: 'Method not allowed here; use POST', code: 'METHOD_NOT_ALLOWED' });
    expect(check(answer({ method: 'GET', status: 405, headers: { ...JSON_TYPE, allow: 'POST, OPTIONS' }, body: refused }))).toBeNull();
    expect(check(answer({ method: 'HEAD', url: `/api/outbox/delivery-status/${REF}`, status: 404, headers: JSON_TYPE, body: '' }))).toBeNull();
    expect(check(answer({ method: 'OPTIONS', status: 204, headers: { allow: 'POST, OPTIONS' }, body: '' }))).toBeNull();
  });

  it('names what is wrong with an answer that the document does not describe', () => {
    expect(check(answer({ body: JSON.stringify([{ external_id: 'a', recipient: '254712345678', sms_count: 1 }]) }))).toMatch(
      /^POST \/api\/outbox\/create -> 200: the body does not match the documented schema \(\/0 must have required property 'message_ref'\)/,
    );
    expect(check(answer({ body: accepted.replace(REF, 'not-a-uuid') }))).toMatch(/\/0\/message_ref must match format "uuid"/);
    expect(check(answer({ status: 400, body: JSON.stringify({ details: 'Body is not valid JSON' }) }))).toMatch(
      /must have required property 'code'/,
    );
    expect(check(answer({ status: 404, body: JSON.stringify({ details: 'x', code: 'NOT_FOUND' }) }))).toMatch(
      /status 404 is not documented for POST \/api\/outbox\/create/,
    );
    expect(check(answer({ status: 401, body: JSON.stringify({ details: 'Invalid API key', code: 'INVALID_API_KEY' }) }))).toMatch(
      /required header WWW-Authenticate is missing/,
    );
    expect(
      check(answer({ status: 429, headers: { ...JSON_TYPE, 'retry-after': 'soon' }, body: JSON.stringify({ details: 'x', code: 'QUEUE_FULL' }) })),
    ).toMatch(/header Retry-After is not an integer/);
    expect(check(answer({ headers: { 'content-type': 'text/html' }, body: '<p>ok</p>' }))).toMatch(/Content-Type "text\/html" is not one of application\/json/);
    expect(check(answer({ body: '[{' }))).toMatch(/the body is not JSON/);
    expect(check(answer({ method: 'PUT', status: 200 }))).toMatch(/has no PUT operation/);
  });

  it('skips paths the document does not describe, and is built once per document', () => {
    expect(check(answer({ method: 'GET', url: '/api/outbox/openapi.json', body: '{}' }))).toBeNull();
    expect(check(answer({ url: '/elsewhere', status: 404, headers: { 'content-type': 'text/html' }, body: 'nope' }))).toBeNull();
    expect(answerCheck({ basePath: '/api/outbox' })).toBe(check);
    expect(answerCheck({ basePath: '/sms/v1' })).not.toBe(check);
  });
});

describe('recordAnswers', () => {
  it('records each answer of a host that breaks the document, for the setup file to fail the test', async () => {
    const app = express();
    app.use(recordAnswers({ basePath: '/api/outbox' }));
    app.post('/api/outbox/create', (_req, res) => {
      res.status(200).json([{ external_id: 'a' }]);
    });
    // Written in pieces: the check reads the whole body.
    app.get('/api/outbox/delivery-status', (_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.write('[');
      res.end(']');
    });
    app.use((_req, res) => {
      res.locals.fellThrough = true;
      res.status(404).send('<p>host</p>');
    });
    await request(app).post('/api/outbox/create').send({});
    await request(app).get('/api/outbox/delivery-status?external_id=a');
    await request(app).get('/health');
    // Taken here so that the guard does not fail this test for the answers it provoked.
    const recorded = answerProblems.splice(0);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatch(/^POST \/api\/outbox\/create -> 200: the body does not match the documented schema/);
  });
});

describe('the test helpers\u2019 gateways', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.sms.close();
    gateway = undefined;
  });

  it('check every answer against the document of their own mount point, base path and limits', async () => {
    gateway = createGateway({ basePath: '/v1', limits: { maxMessagesPerRequest: 2 }, rateLimit: { headers: 'always' } }, '/sms');
    const before = answerStats.checked;
    const sent = await request(gateway.app)
      .post('/sms/v1/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi' }] });
    expect(sent.status).toBe(200);
    const tooMany = await request(gateway.app)
      .post('/sms/v1/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: Array.from({ length: 3 }, () => ({ recipient: '254712345678', message: 'Hi' })) });
    expect(tooMany.status).toBe(422);
    await request(gateway.app).get('/sms/v1/openapi.json');
    await request(gateway.app).get('/elsewhere');
    // The two answers the document describes; not the document itself, nor the host's 404.
    expect(answerStats.checked - before).toBe(2);
  });
});
