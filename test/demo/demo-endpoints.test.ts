/**
 * The demo's own endpoints, as another site's page and as a careless client would use them:
 * a request that names a host other than the demo's (DNS rebinding) reads nothing and
 * changes nothing; `POST /demo/mo`, which can opt a subscriber out, takes the key; its bad
 * bodies are answered with a code and the body it wants; the console it mounts finds every
 * message with an external id, past the first 50.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo, stopDemo, type RunningDemo } from '../helpers/demo.js';
import { eventually } from '../helpers/poll.js';
import { raw } from './demo-http.js';

const KEY = 'endpoints-test-key';
let dir: string;
let demo: RunningDemo;
let port: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sms-outbox-demo-endpoints-'));
  demo = startDemo({ SMS_DB: join(dir, 'demo.db'), SMS_API_KEY: KEY });
  port = Number(new URL(await demo.origin).port);
});

afterAll(async () => {
  if (demo) await stopDemo(demo.child);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const json = { 'Content-Type': 'application/json' };

describe('the demo and other sites', () => {
  it('answers no request that names another host: not the page that hands out its key, the console, metrics or the API', async () => {
    const paths = ['/', '/console/', '/console/messages?principal=demo', '/metrics', '/api/outbox/openapi.json', '/api/outbox/delivery-status?external_id=abc'];
    for (const path of paths) {
      const answer = await raw(port, path, { host: `rebind.attacker.example:${port}`, headers: { 'X-API-Key': KEY } });
      expect({ path, status: answer.status }).toEqual({ path, status: 403 });
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'HOST_NOT_ALLOWED', details: expect.stringContaining('Host') });
      expect(answer.body).not.toContain(KEY);
    }
    // Its own names, with and without the port, are answered.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost', 'LOCALHOST.']) {
      const page = await raw(port, '/', { host });
      expect({ host, status: page.status, location: page.headers.location }).toEqual({ host, status: 303, location: '/console/' });
      expect(String(page.headers['set-cookie'])).toContain(KEY);
    }
  });

  it('lets no other site opt a subscriber out through POST /demo/mo', async () => {
    const body = JSON.stringify({ from: '254712300077', to: '22021501', text: 'STOP' });
    const rebound = await raw(port, '/demo/mo', { method: 'POST', host: `rebind.attacker.example:${port}`, headers: { ...json, 'X-API-Key': KEY }, body });
    expect(rebound.status).toBe(403);
    // The page's own origin without the key (a form another site submits, a script that
    // does not know it) is refused too.
    const keyless = await raw(port, '/demo/mo', { method: 'POST', headers: json, body });
    expect(keyless.status).toBe(401);
    expect(JSON.parse(keyless.body)).toEqual({ code: 'MISSING_API_KEY', details: 'Missing X-API-Key header' });
    const wrong = await raw(port, '/demo/mo', { method: 'POST', headers: { ...json, 'X-API-Key': `${KEY}x` }, body });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body)).toEqual({ code: 'INVALID_API_KEY', details: 'Invalid API key' });
    expect(demo.output()).not.toContain('254712300077');

    // With the key, as a script sends it: the reply arrives, and its STOP opts the number out.
    const sent = await raw(port, '/demo/mo', { method: 'POST', headers: { ...json, 'X-API-Key': KEY }, body });
    expect(sent.status).toBe(204);
    await eventually(() => demo.output().includes('opted_out     254712300077 from 22021501'), { timeoutMs: 10_000, what: 'the opt-out line' });
  });

  it('answers a bad POST /demo/mo body with a code and the body it takes', async () => {
    const headers = { ...json, 'X-API-Key': KEY };
    const missing = await raw(port, '/demo/mo', { method: 'POST', headers, body: JSON.stringify({ from: '254712300078' }) });
    expect(missing.status).toBe(422);
    expect(JSON.parse(missing.body)).toEqual({
      code: 'VALIDATION_FAILED',
      details: 'give a JSON body { "from": 8 to 15 digits, "to": a short code, "text": not empty }',
    });
    const broken = await raw(port, '/demo/mo', { method: 'POST', headers, body: '{"from":' });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body)).toMatchObject({ code: 'INVALID_JSON' });
  });

  it('answers a bad body to its own receivers (/demo/dlr, /demo/inbound) with a code, and prints no stack', async () => {
    for (const path of ['/demo/dlr', '/demo/inbound']) {
      const broken = await raw(port, path, { method: 'POST', headers: json, body: '{"data":' });
      expect({ path, status: broken.status }).toEqual({ path, status: 400 });
      expect(JSON.parse(broken.body)).toMatchObject({ code: 'INVALID_JSON' });
      const large = await raw(port, path, { method: 'POST', headers: json, body: JSON.stringify({ data: { message: 'x'.repeat(200_000) } }) });
      expect({ path, status: large.status }).toEqual({ path, status: 413 });
      expect(JSON.parse(large.body)).toMatchObject({ code: 'BODY_TOO_LARGE' });
    }
    // The console says nothing of a stranger's bad body: no stack, no node_modules path.
    expect(demo.output()).not.toMatch(/^\s+at /m);
    expect(demo.output()).not.toContain('node_modules');
  });
});

/** The console's page at `path` (under `/console`), with the demo's key. */
async function consolePage(path: string): Promise<string> {
  const answer = await raw(port, `/console${path}`, { headers: { 'X-API-Key': KEY } });
  expect(answer.status).toBe(200);
  return answer.body;
}

describe('the demo\u2019s console search', () => {
  it('finds every message with an external id, past the first 50, each linked to its page', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/outbox/create`, {
      method: 'POST',
      headers: { ...json, 'X-API-Key': KEY },
      body: JSON.stringify({
        profile_code: '12345',
        messages: Array.from({ length: 120 }, (_, i) => ({ recipient: `2547123${String(i).padStart(5, '0')}`, message: `Many ${i}`, external_id: 'campaign-7' })),
      }),
    });
    expect(res.status).toBe(200);
    const refs = ((await res.json()) as { message_ref: string }[]).map((m) => m.message_ref);
    const html = await consolePage('/messages?principal=demo&external_id=campaign-7');
    const shown = [...html.matchAll(/message\?principal=demo&amp;ref=([0-9a-f-]+)/g)].map((match) => match[1]!);
    expect(shown.sort()).toEqual([...refs].sort());
    expect(html).not.toContain('id="more-found"');
  });

  it('shows a message\u2019s recipient country on its page', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/outbox/create`, {
      method: 'POST',
      headers: { ...json, 'X-API-Key': KEY },
      body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '2348031234567', message: 'Nigeria', external_id: 'country-1' }] }),
    });
    expect(res.status).toBe(200);
    const ref = ((await res.json()) as { message_ref: string }[])[0]!.message_ref;
    const html = await consolePage(`/message?principal=demo&ref=${ref}`);
    expect(html).toMatch(/<th scope="row">recipient<\/th><td>2348031234567<\/td><\/tr><tr><th scope="row">country<\/th><td>NG<\/td>/);
  });
});

describe('the demo\u2019s metrics', () => {
  it('serves the gateway\u2019s Prometheus metrics at /metrics, beside the process\u2019s own', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^sms_outbox_messages_accepted_total\{endpoint="quick",profile="12345"\} [1-9]\d*$/m);
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});
