/**
 * The document against what the router sends: rate-limit headers, message_ref and the
 * error body, 405 on its paths, and the request encodings it accepts.
 */
import { gzipSync } from 'node:zlib';
import { Ajv2020 } from 'ajv/dist/2020.js';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, ERRORS } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { check, compile2020, operations, resolved, type Json } from './doc-helpers.js';

describe('rate-limit headers in the document', () => {
  it('declares Retry-After, RateLimit and RateLimit-Policy on 429, required where every 429 carries them', async () => {
    const doc = await resolved();
    const status = doc.paths['/api/outbox/delivery-status'].get.responses['429'].headers;
    expect(Object.keys(status).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    expect(Object.values<Json>(status).every((header) => header.required === true)).toBe(true);
    // A send's 429 may be a full queue, which no rate limit counted: only Retry-After is certain.
    const send = doc.paths['/api/outbox/create'].post.responses['429'].headers;
    expect(Object.keys(send).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    expect(send['Retry-After'].required).toBe(true);
    expect(send.RateLimit.required).toBeUndefined();
  });

  it('declares them on every answer after authentication only with `headers: always`', async () => {
    const refused = await resolved(buildOpenApiDocument());
    const always = await resolved(buildOpenApiDocument({ rateLimitHeaders: 'always' }));
    for (const [name, operation] of operations(always)) {
      for (const status of ['200', '400', '404', '413', '415', '422', '500', '503']) {
        const headers = operation.responses[status]?.headers;
        if (operation.responses[status] === undefined) continue;
        expect(Object.keys(headers ?? {}), `${name} ${status}`).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy']));
      }
      // Refused before the per-key limit counts the request: they never carry its headers.
      for (const status of ['401', '403', '405']) expect(operation.responses[status].headers?.RateLimit, `${name} ${status}`).toBeUndefined();
    }
    for (const [name, operation] of operations(refused)) {
      expect(operation.responses['200'].headers?.RateLimit, name).toBeUndefined();
    }
  });

  describe('what the router sends', () => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.sms.close();
      gateway = undefined;
    });

    it('serves a document that declares the headers its answers carry with `headers: always`', async () => {
      gateway = createGateway({ rateLimit: { requests: { limit: 1 }, headers: 'always' } });
      const doc = await resolved((await request(gateway.app).get('/api/outbox/openapi.json')).body);
      const responses = doc.paths['/api/outbox/delivery-status/{message_ref}'].get.responses;
      const first = await request(gateway.app).get(`/api/outbox/delivery-status/${EXAMPLE_UUID}`).set('X-API-Key', KEY);
      expect(first.status).toBe(404);
      const second = await request(gateway.app).get(`/api/outbox/delivery-status/${EXAMPLE_UUID}`).set('X-API-Key', KEY);
      expect(second.status).toBe(429);
      for (const [answer, response] of [
        [first, responses['404']],
        [second, responses['429']],
      ] as const) {
        expect(Object.keys(response.headers).map((name) => name.toLowerCase())).toEqual(
          expect.arrayContaining(['ratelimit', 'ratelimit-policy']),
        );
        expect(answer.headers.ratelimit).toMatch(/^"requests"; r=0; t=\d+$/);
        expect(answer.headers['ratelimit-policy']).toMatch(/^"requests"; q=1; w=60; pk=:[A-Za-z0-9+/=]+:$/);
      }
      expect(second.headers['retry-after']).toMatch(/^\d+$/);
      expect(second.body.code).toBe('RATE_LIMITED');
    });
  });
});

const EXAMPLE_UUID = '0193f1d2-8c4e-7a10-9b2f-4d5e6f708192';

describe('message_ref and the error body', () => {
  /** Compiles with format checks on, as a client generator that maps `uuid` to a UUID type would read it. */
  function compileWithFormats(schema: unknown) {
    const ajv = new Ajv2020({ strict: false, allowUnionTypes: true });
    ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    ajv.addFormat('date-time', () => true);
    return ajv.compile(schema as object);
  }

  it('gives message_ref the uuid format wherever it appears', async () => {
    const doc = await resolved();
    const schemas = doc.components.schemas;
    for (const schema of [
      schemas.QuickAccepted.properties.message_ref,
      schemas.PremiumMessagesAccepted.properties.message_ref,
      schemas.PremiumListAccepted.properties.message_ref,
      schemas.MessageStatus.properties.message_ref,
      schemas.DeliveryReport.properties.data.properties.message_ref,
      doc.paths['/api/outbox/delivery-status/{message_ref}'].get.parameters[0].schema,
    ]) {
      expect(schema).toMatchObject({ type: 'string', format: 'uuid' });
    }
    const accepted = compileWithFormats(schemas.QuickAccepted);
    const item = { external_id: 'a', recipient: '254712345678', sms_count: 1, message_ref: EXAMPLE_UUID };
    expect(accepted(item)).toBe(true);
    expect(accepted({ ...item, message_ref: 'msg-1' })).toBe(false);
  });

  it('requires a code from the error registry beside details', async () => {
    const doc = await resolved();
    const error = doc.components.schemas.Error;
    expect(error.required).toEqual(['details', 'code']);
    expect(error.properties.code.enum).toEqual(Object.keys(ERRORS));
    const check = compile2020(error);
    expect(check({ details: 'Invalid API key', code: 'INVALID_API_KEY' })).toBe(true);
    expect(check({ details: 'Invalid API key' })).toBe(false);
    expect(check({ details: 'Invalid API key', code: 'NO_SUCH_CODE' })).toBe(false);
  });

  describe('against the router', () => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.sms.close();
      gateway = undefined;
    });

    it('answers message_refs that are UUIDs, and refusals with a registry code, as documented', async () => {
      gateway = createGateway();
      const doc = await resolved();
      const sent = await request(gateway.app)
        .post('/api/outbox/create')
        .set('X-API-Key', KEY)
        .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi' }] });
      expect(sent.status).toBe(200);
      const accepted = compileWithFormats(doc.paths['/api/outbox/create'].post.responses['200'].content['application/json'].schema);
      expect(accepted(sent.body), JSON.stringify(accepted.errors)).toBe(true);
      const refused = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', 'nope').send({});
      expect(refused.status).toBe(401);
      expect(compile2020(doc.components.schemas.Error)(refused.body)).toBe(true);
      expect(refused.body.code).toBe('INVALID_API_KEY');
    });
  });
});

describe('405 on the router\u2019s paths', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.sms.close();
    gateway = undefined;
  });

  it('is declared on every operation, with a required Allow header', async () => {
    const doc = await resolved();
    const all = operations(doc);
    expect(all).toHaveLength(12);
    for (const [name, operation] of all) {
      const response = operation.responses['405'];
      expect(response, name).toBeDefined();
      expect(response.headers.Allow.required, name).toBe(true);
      expect(response.content['application/json'].examples.METHOD_NOT_ALLOWED.value.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('is what the router answers for another method on its paths', async () => {
    gateway = createGateway();
    const doc = await resolved();
    const answer = await request(gateway.app).get('/api/outbox/create').set('X-API-Key', KEY);
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toMatch(/POST/);
    const schema = compile2020(doc.paths['/api/outbox/create'].post.responses['405'].content['application/json'].schema);
    expect(schema(answer.body), JSON.stringify(answer.body)).toBe(true);
  });
});

describe('accepted request encodings', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.sms.close();
    gateway = undefined;
  });

  it('documents application/*+json bodies and Content-Encoding gzip, deflate and br on both sends', async () => {
    const doc = await resolved();
    for (const path of ['/api/outbox/create', '/api/outbox/premium']) {
      const operation = doc.paths[path].post;
      const content = operation.requestBody.content;
      expect(Object.keys(content)).toEqual(['application/json', 'application/*+json']);
      expect(content['application/*+json'].schema).toEqual(content['application/json'].schema);
      expect(operation.requestBody.description).toMatch(/Content-Encoding: gzip`, `deflate` or `br`/);
      const encoding = operation.parameters.find((p: Json) => p.name === 'Content-Encoding');
      expect(encoding).toMatchObject({ in: 'header', required: false, schema: { enum: ['identity', 'gzip', 'deflate', 'br'] } });
    }
    expect(doc.components.responses.UnsupportedMediaType.description).toMatch(/Content-Encoding/);
  });

  it('are what the router accepts: a gzip-compressed application/vnd.api+json send, and 415 for another coding', async () => {
    gateway = createGateway();
    const body = JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Packed' }] });
    const packed = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .set('Content-Type', 'application/vnd.api+json')
      .set('Content-Encoding', 'gzip')
      // The bytes as they are: superagent would serialise a Buffer as JSON.
      .serialize((bytes: Buffer) => bytes as unknown as string)
      .send(gzipSync(body));
    expect(packed.status).toBe(200);
    expect(packed.body[0].sms_count).toBe(1);
    const unknown = await request(gateway.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'compress')
      .send(body);
    expect(unknown.status).toBe(415);
    expect(unknown.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });
});
