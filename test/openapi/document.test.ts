import { gzipSync } from 'node:zlib';
import { compileErrors, dereference, validate } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, ERRORS, OptionError, type OpenApiDocument } from '../../src/index.js';
import { buildDlrPayload } from '../../src/dlr/payload.js';
import { buildInboundPayload } from '../../src/dlr/webhook.js';
import { premiumListSchema, premiumMessagesSchema, quickSendSchema } from '../../src/http/schemas.js';
import { createValidators } from '../../src/http/validate-request.js';
import { outcome } from '../../src/lifecycle/states.js';
import { LIMIT_DEFAULTS } from '../../src/http/options.js';
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
      buildOpenApiDocument({ rateLimitHeaders: 'always', serverUrl: '/gateway' }),
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

  it('describes the six endpoints under basePath, with the X-API-Key scheme', () => {
    const doc = buildOpenApiDocument({ basePath: '/sms/api/outbox/', serverUrl: 'https://sms.example' });
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/sms/api/outbox/create',
      '/sms/api/outbox/delivery-status',
      '/sms/api/outbox/delivery-status/{message_ref}',
      '/sms/api/outbox/messages',
      '/sms/api/outbox/messages/{message_ref}',
      '/sms/api/outbox/premium',
    ]);
    expect(doc.servers.map((server) => server.url)).toEqual(['https://sms.example']);
    expect(doc.components.securitySchemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
  });

  it('lists every error status with the {details, code} schema and examples from the error registry', async () => {
    const doc = await resolved();
    const send = doc.paths['/api/outbox/create'].post.responses;
    expect(Object.keys(send).sort()).toEqual(['200', '400', '401', '402', '403', '405', '409', '413', '415', '422', '429', '500', '503']);
    expect(Object.keys(doc.paths['/api/outbox/delivery-status/{message_ref}'].get.responses)).toContain('404');
    const errorSchema = compile2020(doc.components.schemas.Error);
    const seen = new Set<string>();
    for (const [status, response] of Object.entries<Json>(send)) {
      if (status === '200') continue;
      const media = response.content['application/json'];
      expect(media.schema).toEqual(doc.components.schemas.Error);
      for (const [code, example] of Object.entries<Json>(media.examples)) {
        expect(errorSchema(example.value), `${status} ${code}`).toBe(true);
        expect(example.value.code).toBe(code);
        expect(ERRORS[code as keyof typeof ERRORS].status).toBe(Number(status));
        seen.add(code);
      }
    }
    expect(send['429'].headers['Retry-After']).toBeDefined();
    expect(send['503'].headers['Retry-After']).toBeDefined();
    expect(send['401'].headers['WWW-Authenticate']).toBeDefined();
    expect(send['405'].headers.Allow.required).toBe(true);
    expect(send['500'].content['application/json'].examples.SERVER_ERROR.value).toEqual({
      details: '500 server-error',
      code: 'SERVER_ERROR',
    });
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

  it('describes the inbound message webhook: its headers, and a payload the dispatcher really builds', async () => {
    const doc = await resolved();
    const hook = doc.webhooks.inboundMessage.post;
    expect(hook.parameters.map((p: Json) => `${p.in}:${p.name}`)).toEqual(['header:webhook-id', 'header:webhook-timestamp', 'header:webhook-signature']);
    const schema = compile2020(hook.requestBody.content['application/json'].schema);
    const payload = buildInboundPayload('uid-2', {
      ref: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', principalId: 'acme', profileCode: '22021501', from: '254712345678', to: '22021501',
      text: 'STOP', receivedAt: 1_700_000_002_000, callbackUrl: 'https://client.example/in', callbackSecret: null, uid: 'uid-2', callback: null,
    });
    expect(schema(payload), JSON.stringify(schema.errors)).toBe(true);
    expect(schema({ ...payload, event_type: 'sms_delivery_status' })).toBe(false);
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
    expect(() => createGateway({ openapi: 'yes' as unknown as boolean })).toThrow(
      /`openapi` must be true, false or \{ serverUrl, info \}, got a string/,
    );
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

/** Redocly's `recommended` ruleset on `doc`: each problem as `severity rule: message at pointer`. */
async function redoclyProblems(doc: OpenApiDocument): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc, null, 2), absoluteRef: '/openapi.json', config });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
}

/** The send and status operations of a resolved document, by `METHOD path`. */
function operations(doc: Json): [string, Json][] {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, operation]): [string, Json] => [`${method.toUpperCase()} ${path}`, operation]),
  );
}

describe('the document passes Redocly\u2019s recommended rules', () => {
  it('has no error and no warning, with the defaults and with every option', async () => {
    expect(await redoclyProblems(buildOpenApiDocument())).toEqual([]);
    const everything = buildOpenApiDocument({
      basePath: '',
      serverUrl: 'https://sms.example.org/',
      rateLimitHeaders: 'always',
      limits: { maxMessagesPerRequest: 5 },
      info: { title: 'Acme SMS', version: '2.1.0', description: 'Acme\u2019s gateway.' },
    });
    expect(await redoclyProblems(everything)).toEqual([]);
  });

  it('reports what it is asked to check, so the empty list above means something', async () => {
    const doc = buildOpenApiDocument() as Json;
    delete doc.servers;
    delete doc.info.license;
    const problems = await redoclyProblems(doc as OpenApiDocument);
    expect(problems).toEqual([
      expect.stringMatching(/^error no-empty-servers:/),
      expect.stringMatching(/^warn info-license:/),
    ]);
  });
});

describe('servers and license', () => {
  it('names the origin the document was fetched from unless told the server, and the MIT license', () => {
    const doc = buildOpenApiDocument();
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(doc.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    // A trailing slash would double the one each path starts with.
    expect(buildOpenApiDocument({ serverUrl: 'https://sms.example.org/' }).servers[0]!.url).toBe('https://sms.example.org');
  });

  describe('served by the router', () => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.sms.close();
      gateway = undefined;
    });

    it('takes the server and info from the `openapi` option', async () => {
      gateway = createGateway({ openapi: { serverUrl: 'https://sms.example.org', info: { title: 'Acme SMS', version: '3.0.0' } } });
      const doc = (await request(gateway.app).get('/api/outbox/openapi.json')).body as Json;
      expect(doc.servers).toEqual([{ url: 'https://sms.example.org', description: expect.any(String) }]);
      expect(doc.info).toMatchObject({ title: 'Acme SMS', version: '3.0.0', license: { name: 'MIT' } });
      expect(Object.keys(doc.paths)).toContain('/api/outbox/create');
      // `{}` serves the document as `true` does.
      const plain = createGateway({ openapi: {} });
      const served = (await request(plain.app).get('/api/outbox/openapi.json')).body as Json;
      await plain.sms.close();
      expect(served).toEqual(buildOpenApiDocument());
    });

    it('refuses a server that is not a URL or a path, and a typo, at construction', () => {
      const built = (openapi: unknown) => () => createGateway({ openapi: openapi as never });
      expect(built({ serverUrl: 'sms.example.org' })).toThrow(/`openapi`.serverUrl must be an absolute http\(s\) URL/);
      expect(built({ serverUrl: 'ftp://sms.example.org' })).toThrow(/must be an http or https URL/);
      expect(built({ serverUrl: 'https://user:pw@sms.example.org' })).toThrow(/no credentials, query or fragment/);
      expect(built({ serverUrl: 42 })).toThrow(/serverUrl must be a string, got a number/);
      expect(built({ serverURL: 'https://sms.example.org' })).toThrow(/Did you mean `serverUrl`\?/);
      expect(built({ info: { title: '' } })).toThrow(/info.title must be a non-empty string/);
      expect(built({ serverUrl: 'nope' })).toThrow(OptionError);
    });
  });
});

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
    expect(all).toHaveLength(6);
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
