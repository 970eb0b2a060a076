/**
 * The HTTP server metric of the `metrics` option: each answer of the router's own routes
 * observed in `sms_outbox_http_server_request_duration_seconds` under the route's template,
 * never the raw path, and the host's routes left alone.
 */
import * as client from 'prom-client';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { PromClient } from '../../src/index.js';
import { createGateway, KEY, quickSend, type TestGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/poll.js';

const typedClient: PromClient = client;
const NAME = 'sms_outbox_http_server_request_duration_seconds';

/** One series of the histogram: its labels and how many answers it observed. */
interface Series {
  method: string;
  route: string;
  status: string;
  count: number;
}

/** One sample of the histogram; prom-client's JSON names each (`_bucket`, `_sum`, `_count`), its type does not say so. */
type Sample = client.MetricValue<string> & { metricName?: string };

/** The histogram's samples (none when it is not registered) and its type. */
async function histogram(registry: client.Registry): Promise<{ type: string | undefined; values: Sample[] }> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === NAME);
  return { type: metric?.type === undefined ? undefined : String(metric.type), values: (metric?.values ?? []) as Sample[] };
}

/** The histogram's series, from its `_count` samples, sorted. */
async function series(registry: client.Registry): Promise<Series[]> {
  return (await histogram(registry)).values
    .filter((v) => v.metricName === `${NAME}_count`)
    .map((v) => ({
      method: String(v.labels.http_request_method),
      route: String(v.labels.http_route),
      status: String(v.labels.http_response_status_code),
      count: v.value,
    }))
    .sort((a, b) => `${a.route} ${a.method} ${a.status}`.localeCompare(`${b.route} ${b.method} ${b.status}`));
}

const total = (list: Series[]) => list.reduce((sum, s) => sum + s.count, 0);

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.sms.close();
  gateway = undefined;
});

describe('the request duration histogram', () => {
  it('observes each answer of the router by method, route template and status; the host\u2019s routes not at all', async () => {
    const registry = new client.Registry();
    gateway = createGateway({ metrics: { client: typedClient, registry } });
    const { app } = gateway;
    const sent = await quickSend(app);
    const ref = (sent.body as { message_ref: string }[])[0]!.message_ref;
    await request(app).post('/api/outbox/create').set('X-API-Key', 'wrong').send({}).expect(401);
    await request(app).get(`/api/outbox/delivery-status/${ref}`).set('X-API-Key', KEY).expect(200);
    await request(app).get('/api/outbox/delivery-status/no-such-ref').set('X-API-Key', KEY).expect(404);
    await request(app).get('/api/outbox/delivery-status/another-ref').set('X-API-Key', KEY).expect(404);
    await request(app).put('/api/outbox/create').set('X-API-Key', KEY).expect(405);
    // A method outside the conventions' list is `_OTHER`: clients cannot add label values.
    await request(app).propfind('/api/outbox/create').set('X-API-Key', KEY).expect(405);
    // The host's route (the gateway's fall-through) and a path near the router's own.
    await request(app).get('/health').expect(404);
    await request(app).get('/api/outbox/nothing-here').set('X-API-Key', KEY).expect(404);

    const expected: Series[] = [
      { method: '_OTHER', route: '/api/outbox/create', status: '405', count: 1 },
      { method: 'POST', route: '/api/outbox/create', status: '200', count: 1 },
      { method: 'POST', route: '/api/outbox/create', status: '401', count: 1 },
      { method: 'PUT', route: '/api/outbox/create', status: '405', count: 1 },
      { method: 'GET', route: '/api/outbox/delivery-status/:message_ref', status: '200', count: 1 },
      { method: 'GET', route: '/api/outbox/delivery-status/:message_ref', status: '404', count: 2 },
    ];
    // Observed when the answer is handed to the socket, which may be a turn after the client has it.
    await eventually(async () => total(await series(registry)) >= total(expected));
    expect(await series(registry)).toEqual(expected);
  });

  it('records durations in the conventions\u2019 buckets, and the document\u2019s route too', async () => {
    const registry = new client.Registry();
    gateway = createGateway({ metrics: { client: typedClient, registry } });
    await request(gateway.app).get('/api/outbox/openapi.json').expect(200);
    await eventually(async () => total(await series(registry)) >= 1);
    expect(await series(registry)).toEqual([{ method: 'GET', route: '/api/outbox/openapi.json', status: '200', count: 1 }]);

    const metric = await histogram(registry);
    expect(metric.type).toBe('histogram');
    const bounds = metric.values.filter((v) => v.metricName === `${NAME}_bucket`).map((v) => v.labels.le);
    expect(bounds).toEqual([0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, '+Inf']);
    const sum = metric.values.find((v) => v.metricName === `${NAME}_sum`)!.value;
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(10);
  });

  it('writes the base path into the template, and labels a 405 with the method asked', async () => {
    const registry = new client.Registry();
    gateway = createGateway({ basePath: '/sms/v2', metrics: { client: typedClient, registry } });
    await request(gateway.app).get('/sms/v2/messages/abc').set('X-API-Key', KEY).expect(405);
    await request(gateway.app).delete('/sms/v2/messages/abc').set('X-API-Key', KEY).expect(404);
    await eventually(async () => total(await series(registry)) >= 2);
    expect(await series(registry)).toEqual([
      { method: 'DELETE', route: '/sms/v2/messages/:message_ref', status: '404', count: 1 },
      { method: 'GET', route: '/sms/v2/messages/:message_ref', status: '405', count: 1 },
    ]);
  });
});
