/**
 * The endpoint table (`src/endpoints.ts`) is what the router serves, what it answers 405 on,
 * what the OpenAPI document describes and what `request.rejected` names: every row is all
 * four, so a row added there cannot be served undocumented, or documented unserved.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { ENDPOINTS, ENDPOINT_NAMES, endpointAt } from '../../src/endpoints.js';
import { buildOpenApiDocument, type RequestRejectedEvent } from '../../src/index.js';
import { createGateway, KEY, OTHER_KEY, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

const REF = '0193a0c4-7b1e-7cc0-8000-000000000000';

/** A row's path as a client sends it: its parameter filled. */
const concrete = (path: string): string => `/api/outbox${path.replace(':message_ref', REF)}`;

describe('the endpoint table', () => {
  it('is the OpenAPI paths: one operation per row, with the row\u2019s method and operation id, and no other', () => {
    const { paths } = buildOpenApiDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const documented = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );
    const rows = ENDPOINTS.map((row) => `${row.method} /api/outbox${row.path.replace(/:(\w+)/g, '{$1}')} ${row.operationId}`);
    expect(documented.sort()).toEqual(rows.sort());
  });

  it('is what the router serves: each row\u2019s method reaches its handler, the others are 405 naming the row\u2019s endpoint', async () => {
    const rejected: RequestRejectedEvent[] = [];
    gateway = createGateway();
    gateway.sms.on('request.rejected', (event) => rejected.push(event));
    for (const row of ENDPOINTS) {
      const path = concrete(row.path);
      const served = await request(gateway.app)[row.method === 'GET' ? 'get' : row.method === 'POST' ? 'post' : 'delete'](path).set('X-API-Key', row.scope === 'callbacks' ? OTHER_KEY : KEY);
      // Served: the handler answered in the router's JSON, not a 405 and not the host's 404.
      expect([200, 404, 415, 422], `${row.method} ${path}`).toContain(served.status);
      // (the list and the reports answer 200 with their page; every other row, unfilled, an error)
      const page = { listMessages: 'messages', pullReports: 'reports', listCallbacks: 'callbacks' } as Record<string, string>;
      expect(served.body).toHaveProperty(page[row.operationId] ?? 'details');
      const wrong = row.method === 'POST' ? 'put' : 'patch';
      const refused = await request(gateway.app)[wrong](path).set('X-API-Key', KEY);
      expect(refused.status, `${wrong} ${path}`).toBe(405);
      expect(refused.headers.allow).toContain(row.method);
      // A path two endpoints share (`/messages`: list and cancel) names the first of them.
      expect(rejected.at(-1)?.endpoint).toBe(ENDPOINTS.find((other) => other.path === row.path)!.endpoint);
    }
  });

  it('names each path\u2019s endpoint, and none for a path outside the table', () => {
    for (const row of ENDPOINTS) expect(endpointAt(row.path.replace(':message_ref', REF), row.method)).toBe(row.endpoint);
    // A path two endpoints share: the method tells them apart (GET lists, DELETE cancels).
    expect(endpointAt('/messages', 'GET')).toBe('list');
    expect(endpointAt('/messages', 'delete')).toBe('cancel');
    expect(endpointAt(`/messages/${REF}`, 'GET')).toBe('cancel');
    expect(endpointAt('/elsewhere')).toBeNull();
    expect(endpointAt('/created')).toBeNull();
    // The longest prefix wins: a preview is not counted as a send.
    expect(endpointAt('/create/preview')).toBe('preview');
    expect(endpointAt('/create/previews')).toBe('quick');
    expect(ENDPOINT_NAMES).toEqual(['quick', 'premium', 'preview', 'status', 'list', 'reports', 'callbacks', 'cancel']);
  });
});
