/**
 * The OpenAPI document as the router serves it: where, with which servers and license,
 * and passing Redocly's recommended rules.
 */
import { validate } from '@readme/openapi-parser';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument, OptionError, type OpenApiDocument } from '../../src/index.js';
import { createGateway, KEY, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';
import { compile2020, redoclyProblems, resolved, type Json } from './doc-helpers.js';

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
    // The package cannot know the operator's contact: it points to whoever issued the key.
    expect(doc.info.contact).toEqual({ name: expect.stringMatching(/issued your API key/) });
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
      const contact = { name: 'Acme support', url: 'https://acme.example/support', email: 'sms@acme.example' };
      gateway = createGateway({ openapi: { serverUrl: 'https://sms.example.org', info: { title: 'Acme SMS', version: '3.0.0', contact } } });
      const doc = (await request(gateway.app).get('/api/outbox/openapi.json')).body as Json;
      expect(doc.servers).toEqual([{ url: 'https://sms.example.org', description: expect.any(String) }]);
      expect(doc.info).toMatchObject({ title: 'Acme SMS', version: '3.0.0', contact, license: { name: 'MIT' } });
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
      expect(built({ info: { contact: 'sms@acme.example' } })).toThrow(/info.contact must be an object, got a string/);
      expect(built({ info: { contact: { mail: 'sms@acme.example' } } })).toThrow(/Did you mean `email`\?/);
      expect(built({ info: { contact: { url: '' } } })).toThrow(/info.contact.url must be a non-empty string/);
      expect(built({ serverUrl: 'nope' })).toThrow(OptionError);
    });
  });
});
