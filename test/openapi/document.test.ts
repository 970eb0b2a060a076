/**
 * buildOpenApiDocument: a valid OpenAPI 3.1 document built from the validators' own
 * schemas, with its endpoints, errors, examples and webhooks.
 */
import { compileErrors } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, ERRORS, type OpenApiDocument } from '../../src/index.js';
import { buildDlrPayload, buildReport } from '../../src/dlr/payload.js';
import { buildInboundPayload } from '../../src/dlr/webhook.js';
import { premiumListSchema, premiumMessagesSchema, quickSendSchema } from '../../src/http/schemas.js';
import { createValidators } from '../../src/http/validate-request.js';
import { outcome } from '../../src/lifecycle/states.js';
import { LIMIT_DEFAULTS } from '../../src/http/options.js';
import { buildNewMessage } from '../../src/testing.js';
import { check, compile2020, compileRequestSchema, resolved, type Json } from './doc-helpers.js';

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

  it('describes the endpoints under basePath, with the X-API-Key scheme', () => {
    const doc = buildOpenApiDocument({ basePath: '/sms/api/outbox/', serverUrl: 'https://sms.example' });
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/sms/api/outbox/callbacks',
      '/sms/api/outbox/callbacks/replay',
      '/sms/api/outbox/create',
      '/sms/api/outbox/create/preview',
      '/sms/api/outbox/delivery-status',
      '/sms/api/outbox/delivery-status/{message_ref}',
      '/sms/api/outbox/messages',
      '/sms/api/outbox/messages/{message_ref}',
      '/sms/api/outbox/premium',
      '/sms/api/outbox/premium/preview',
      '/sms/api/outbox/reports',
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
    // Every code a send can answer has an example (NOT_FOUND belongs to the status endpoint,
    // the cursor and query codes to the list, the replay's to the replay).
    const elsewhere = ['NOT_FOUND', 'INVALID_CURSOR', 'INVALID_LIST_QUERY', 'INVALID_REPLAY'];
    expect([...seen].sort()).toEqual(Object.keys(ERRORS).filter((code) => !elsewhere.includes(code)).sort());
    const list = doc.paths['/api/outbox/messages'].get.responses;
    expect(list['400'].content['application/json'].examples.INVALID_CURSOR.value.code).toBe('INVALID_CURSOR');
    expect(list['422'].content['application/json'].examples.INVALID_LIST_QUERY.value.code).toBe('INVALID_LIST_QUERY');
    const replay = doc.paths['/api/outbox/callbacks/replay'].post.responses;
    expect(replay['422'].content['application/json'].examples.INVALID_REPLAY.value.code).toBe('INVALID_REPLAY');
    expect(replay['403'].content['application/json'].examples.CALLBACKS_SCOPE_DENIED.value.code).toBe('CALLBACKS_SCOPE_DENIED');
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
    // `+254 712 345 678` is the profile's to take or refuse (its defaultCountry); letters are no number anywhere.
    expect(premium({ profile_code: '1', to: ['+254 712 345 678'], message: 'x' })).toBe(true);
    expect(premium({ profile_code: '1', to: ['tel:254712345678'], message: 'x' })).toBe(false);
    expect(premium({ profile_code: '1', messages: [{ recipient: '254712345678', message: 'x' }] })).toBe(false);
    const quick = compile2020(doc.components.schemas.QuickSendRequest);
    expect(quick({ profile_code: '1', messages: [{ recipient: '0712345678', message: 'x' }] })).toBe(true);
    expect(quick({ profile_code: '1', messages: [{ recipient: '12', message: 'x' }] })).toBe(false);
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
      'header:traceparent',
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
    const flat = buildReport('uid-1', base, 'flat');
    expect(schema(flat), JSON.stringify(schema.errors)).toBe(true);
    expect(schema({ ...flat, status: 'queued' })).toBe(false);
    for (const example of Object.values<Json>(hook.requestBody.content['application/json'].examples)) {
      expect(schema(example.value)).toBe(true);
    }
  });

  it('describes the inbound message webhook: its headers, and a payload the dispatcher really builds', async () => {
    const doc = await resolved();
    const hook = doc.webhooks.inboundMessage.post;
    expect(hook.parameters.map((p: Json) => `${p.in}:${p.name}`)).toEqual(['header:webhook-id', 'header:webhook-timestamp', 'header:webhook-signature', 'header:traceparent']);
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
