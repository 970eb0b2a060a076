import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, ERRORS, type OpenApiDocument } from '../../src/index.js';
import { buildDlrPayload } from '../../src/dlr/payload.js';
import { premiumListSchema, premiumMessagesSchema, quickSendSchema } from '../../src/http/schemas.js';
import { createValidators } from '../../src/http/validate-request.js';
import { outcome } from '../../src/lifecycle/states.js';
import { LIMIT_DEFAULTS } from '../../src/http/limits.js';
import { buildNewMessage } from '../../src/testing.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

// The document is walked by path and key; typing every level would only restate it.
type Json = Record<string, any>;

/** Validates with the real OpenAPI 3.1 validator; it dereferences in place, so on a copy. */
async function check(doc: OpenApiDocument) {
  return validate(structuredClone(doc) as never);
}

/** The document with every `$ref` replaced, for schema-by-schema checks. */
async function resolved(doc: OpenApiDocument = buildOpenApiDocument()): Promise<Json> {
  return (await dereference(structuredClone(doc) as never)) as Json;
}

/** Compiles a schema of the document the way an OpenAPI 3.1 tool reads it (JSON Schema 2020-12). */
function compile2020(schema: unknown) {
  const ajv = new Ajv2020({ strict: false, allowUnionTypes: true, validateFormats: false });
  return ajv.compile(schema as object);
}

/** The request validators' own Ajv settings, on the schemas of `http/schemas.ts`. */
function compileRequestSchema(schema: object) {
  return new Ajv({ verbose: true, allowUnionTypes: true, strict: true }).compile(schema);
}

describe('buildOpenApiDocument', () => {
  it('is a valid OpenAPI 3.1 document, with and without options', async () => {
    for (const doc of [
      buildOpenApiDocument(),
      buildOpenApiDocument({ basePath: '/sms/v1/', limits: { maxMessagesPerRequest: 5 }, serverUrl: 'https://sms.example' }),
      buildOpenApiDocument({ basePath: '' }),
    ]) {
      const result = await check(doc);
      expect(result.valid ? 'valid' : compileErrors(result)).toBe('valid');
      expect(result.warnings).toEqual([]);
      expect(doc.openapi).toBe('3.1.0');
    }
  });

  it('is rejected by the validator when broken, so the validation above means something', async () => {
    const doc = buildOpenApiDocument() as Json;
    delete doc.paths['/api/outbox/delivery-status/{message_ref}'].get.parameters;
    const result = await check(doc as OpenApiDocument);
    expect(result.valid).toBe(false);
  });

  it('uses the request validators\u2019 own schemas, with the limits given', () => {
    const limits = { ...LIMIT_DEFAULTS, maxMessagesPerRequest: 7 };
    const schemas = buildOpenApiDocument({ limits }).components.schemas as Json;
    expect(schemas.QuickSendRequest.properties).toEqual(quickSendSchema(limits).properties);
    expect(schemas.PremiumMessagesRequest.properties).toEqual(premiumMessagesSchema(limits).properties);
    expect(schemas.QuickSendRequest.properties.messages.maxItems).toBe(7);
    const list = premiumListSchema(limits);
    expect(schemas.PremiumListRequest.required).toEqual(list.required);
    expect(schemas.PremiumListRequest.properties.message).toEqual(list.properties.message);
    // The one widening: `to` may be a single number, which the validator accepts too.
    expect(schemas.PremiumListRequest.properties.to.anyOf).toEqual([list.properties.to.items, list.properties.to]);
    expect(schemas.PremiumSendRequest.oneOf).toEqual([
      { $ref: '#/components/schemas/PremiumMessagesRequest' },
      { $ref: '#/components/schemas/PremiumListRequest' },
    ]);
  });

  it('describes the four endpoints under basePath, with the X-API-Key scheme', () => {
    const doc = buildOpenApiDocument({ basePath: '/sms/api/outbox/', serverUrl: 'https://sms.example' });
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/sms/api/outbox/create',
      '/sms/api/outbox/delivery-status',
      '/sms/api/outbox/delivery-status/{message_ref}',
      '/sms/api/outbox/premium',
    ]);
    expect(doc.servers).toEqual([{ url: 'https://sms.example' }]);
    expect(doc.components.securitySchemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
  });

  it('lists every error status with the {details} schema and examples from the error registry', async () => {
    const doc = await resolved();
    const send = doc.paths['/api/outbox/create'].post.responses;
    expect(Object.keys(send).sort()).toEqual(['200', '400', '401', '403', '413', '415', '422', '429', '500', '503']);
    expect(Object.keys(doc.paths['/api/outbox/delivery-status/{message_ref}'].get.responses)).toContain('404');
    const errorSchema = compile2020(doc.components.schemas.Error);
    const seen = new Set<string>();
    for (const [status, response] of Object.entries<Json>(send)) {
      if (status === '200') continue;
      const media = response.content['application/json'];
      expect(media.schema).toEqual(doc.components.schemas.Error);
      for (const [code, example] of Object.entries<Json>(media.examples)) {
        expect(errorSchema(example.value), `${status} ${code}`).toBe(true);
        expect(ERRORS[code as keyof typeof ERRORS].status).toBe(Number(status));
        seen.add(code);
      }
    }
    expect(send['429'].headers['Retry-After']).toBeDefined();
    expect(send['503'].headers['Retry-After']).toBeDefined();
    expect(send['401'].headers['WWW-Authenticate']).toBeDefined();
    expect(send['500'].content['application/json'].examples.SERVER_ERROR.value).toEqual({ details: '500 server-error' });
    // Every code a send can answer has an example (NOT_FOUND belongs to the status endpoint).
    expect([...seen].sort()).toEqual(Object.keys(ERRORS).filter((code) => code !== 'NOT_FOUND').sort());
  });

  it('has request examples that the request schemas and the router\u2019s validators accept', async () => {
    const doc = await resolved();
    const validators = createValidators({ ...LIMIT_DEFAULTS }, () => null);
    const plain = {
      quick: compileRequestSchema(quickSendSchema({ ...LIMIT_DEFAULTS })),
      messages: compileRequestSchema(premiumMessagesSchema({ ...LIMIT_DEFAULTS })),
      list: compileRequestSchema(premiumListSchema({ ...LIMIT_DEFAULTS })),
    };
    const cases = [
      { path: '/api/outbox/create', validator: validators.quick, schemaOf: () => plain.quick },
      {
        path: '/api/outbox/premium',
        validator: validators.premium,
        schemaOf: (body: Json) => ('messages' in body ? plain.messages : plain.list),
      },
    ];
    let count = 0;
    for (const { path, validator, schemaOf } of cases) {
      const media = doc.paths[path].post.requestBody.content['application/json'];
      const documented = compile2020(media.schema);
      for (const [name, example] of Object.entries<Json>(media.examples)) {
        const body = example.value as Json;
        const original = schemaOf(body);
        expect(original(body), `${path} ${name}: ${JSON.stringify(original.errors)}`).toBe(true);
        expect(documented(body), `${path} ${name}: ${JSON.stringify(documented.errors)}`).toBe(true);
        expect(() => validator(body)).not.toThrow();
        count += 1;
      }
    }
    expect(count).toBe(3);
  });

  it('accepts exactly one premium form per body, and what the validator refuses it refuses too', async () => {
    const doc = await resolved();
    const premium = compile2020(doc.components.schemas.PremiumSendRequest);
    expect(premium({ profile_code: '1', to: '254712345678', message: 'one number' })).toBe(true);
    expect(premium({ profile_code: '1', messages: [{ mobile_number: '254712345678', message: 'x' }] })).toBe(true);
    expect(premium({ profile_code: '1', to: ['+254712345678'], message: 'x' })).toBe(false);
    expect(premium({ profile_code: '1', messages: [{ recipient: '254712345678', message: 'x' }] })).toBe(false);
    const quick = compile2020(doc.components.schemas.QuickSendRequest);
    expect(quick({ profile_code: '1', messages: [{ recipient: '0712345678', message: 'x' }] })).toBe(false);
  });

  it('has response examples that match their response schemas', async () => {
    const doc = await resolved();
    let count = 0;
    for (const path of ['/api/outbox/create', '/api/outbox/premium']) {
      const media = doc.paths[path].post.responses['200'].content['application/json'];
      const schema = compile2020(media.schema);
      for (const example of Object.values<Json>(media.examples)) {
        expect(schema(example.value), JSON.stringify(schema.errors)).toBe(true);
        count += 1;
      }
    }
    expect(count).toBe(3);
  });

  it('describes the delivery report webhook: its headers, and a payload the dispatcher really builds', async () => {
    const doc = await resolved();
    const hook = doc.webhooks.deliveryReport.post;
    expect(hook.parameters.map((p: Json) => `${p.in}:${p.name}`)).toEqual([
      'header:webhook-id',
      'header:webhook-timestamp',
      'header:webhook-signature',
    ]);
    const schema = compile2020(hook.requestBody.content['application/json'].schema);
    const done = outcome('undelivered', 'absent_subscriber');
    const base = {
      ...buildNewMessage({ referenceField: 'message_id', recipientField: 'to', externalId: 'm-1' }),
      state: done.state,
      statusReason: done.reason,
      statusDescription: done.description,
      attempts: 1,
      lastError: null,
      updatedAt: 1_700_000_001_000,
      parts: [],
      callback: null,
    };
    const payload = buildDlrPayload('uid-1', base);
    expect(schema(payload), JSON.stringify(schema.errors)).toBe(true);
    expect(schema({ ...payload, data: { ...payload.data, status: 'queued' } })).toBe(false);
    for (const example of Object.values<Json>(hook.requestBody.content['application/json'].examples)) {
      expect(schema(example.value)).toBe(true);
    }
  });
});

describe('GET <basePath>/openapi.json', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.sms.close();
    gateway = undefined;
  });

  it('is served without a key, with the paths where the router is mounted and its limits', async () => {
    gateway = createGateway({ basePath: '/v1', limits: { maxMessagesPerRequest: 3 } }, '/sms');
    const res = await request(gateway.app).get('/sms/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(buildOpenApiDocument({ basePath: '/sms/v1', limits: { maxMessagesPerRequest: 3 } }));
    expect(Object.keys(res.body.paths)).toContain('/sms/v1/create');
    expect(res.body.components.schemas.QuickSendRequest.properties.messages.maxItems).toBe(3);
    const result = await validate(res.body);
    expect(result.valid).toBe(true);
  });

  it('falls through to the host app when `openapi: false`', async () => {
    gateway = createGateway({ openapi: false });
    const res = await request(gateway.app).get('/api/outbox/openapi.json');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ host: 'fell through' });
  });

  it('refuses a non-boolean `openapi` at construction', () => {
    expect(() => createGateway({ openapi: 'yes' as unknown as boolean })).toThrow(/`openapi` must be true or false/);
  });

  it('describes what the router really answers: a send and its status match the documented schemas', async () => {
    gateway = createGateway();
    const doc = await resolved((await request(gateway.app).get('/api/outbox/openapi.json')).body);
    const paths = doc.paths;
    const sent = await request(gateway.app)
      .post('/api/outbox/premium')
      .set('X-API-Key', KEY)
      .send({ profile_code: '22021501', to: ['254712345678'], message: 'Hi', message_id: 'm-9' });
    expect(sent.status).toBe(200);
    const accepted = compile2020(paths['/api/outbox/premium'].post.responses['200'].content['application/json'].schema);
    expect(accepted(sent.body), JSON.stringify(accepted.errors)).toBe(true);

    const statusSchema = compile2020(
      paths['/api/outbox/delivery-status/{message_ref}'].get.responses['200'].content['application/json'].schema,
    );
    const ref = sent.body[0].message_ref as string;
    const status = await eventually(async () => {
      const res = await request(gateway!.app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY);
      return res.body.status === 'delivered' ? res.body : undefined;
    });
    expect(statusSchema(status), JSON.stringify(statusSchema.errors)).toBe(true);

    const refused = await request(gateway.app).post('/api/outbox/create').set('X-API-Key', KEY).send({ profile_code: '12345' });
    expect(refused.status).toBe(422);
    const errorSchema = compile2020(paths['/api/outbox/create'].post.responses['422'].content['application/json'].schema);
    expect(errorSchema(refused.body)).toBe(true);
  });
});
