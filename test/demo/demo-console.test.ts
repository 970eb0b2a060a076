/**
 * What the demo prints: a delivery report or a subscriber's reply that holds a newline or a
 * terminal escape cannot print a line of its own (log forging); and an SMSC that is down
 * is one console line, not a stack per failed connect, while the operator console's
 * carrier view says the bind is down, since when, after how many attempts and why.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { demoFiles, startDemo } from '../helpers/demo.js';
import { eventually } from '../helpers/poll.js';
import { raw } from './demo-http.js';

const KEY = 'console-test-key';
const { path: dbFile, running } = demoFiles('sms-outbox-demo-console-');

/** A port nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the demo\u2019s console', () => {
  it('prints a report\u2019s or a reply\u2019s newline and escape codes as escapes, never as a line of their own', async () => {
    const demo = startDemo({ SMS_DB: dbFile('forge.db'), SMS_API_KEY: KEY });
    running.push(demo);
    const port = Number(new URL(await demo.origin).port);
    const json = { 'Content-Type': 'application/json' };
    const report = await raw(port, '/demo/dlr', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ data: { message_ref: 'r-1\nsms-outbox demo gateway on http://evil.example', status: 'delivered\u001b[2J\r' } }),
    });
    expect(report.status).toBe(204);
    const reply = await raw(port, '/demo/mo', {
      method: 'POST',
      headers: { ...json, 'X-API-Key': KEY },
      body: JSON.stringify({ from: '254712300031', to: '22021501', text: 'hi\nerror         [storage] forged\u2028too' }),
    });
    expect(reply.status).toBe(204);
    await eventually(() => demo.output().includes('inbound.received 254712300031'), { timeoutMs: 10_000, what: 'the reply forwarded to /demo/inbound' });

    const lines = demo.output().split('\n');
    expect(lines.filter((line) => line.startsWith('sms-outbox demo gateway on http://evil'))).toEqual([]);
    expect(lines.filter((line) => line.startsWith('error         [storage] forged'))).toEqual([]);
    expect(demo.output()).not.toMatch(/[\u001b\r\u2028]/);
    expect(demo.output()).toContain('dlr.received  r-1\\nsms-outbox demo gateway on http://evil.example delivered\\u001b[2J\\r');
    expect(demo.output()).toContain('inbound.received 254712300031 22021501 hi\\nerror         [storage] forged\\u2028too');
  }, 40_000);

  it('with its SMSC down: one line, no stack, and the console says the carrier is down and why', async () => {
    const smsc = await closedPort();
    const demo = startDemo({ SMS_DB: dbFile('down.db'), SMS_API_KEY: KEY, SMPP_URL: `smpp://demo:pw@127.0.0.1:${smsc}` });
    running.push(demo);
    const port = Number(new URL(await demo.origin).port);
    // By the third failed attempt the terminal has had its chance to print one line per attempt.
    let row = '';
    await eventually(
      async () => {
        const page = await raw(port, '/console/carrier', { headers: { 'X-API-Key': KEY } });
        row = /<table id="binds">[\s\S]*?<tbody>([\s\S]*?)<\/tr>/.exec(page.body)?.[1]?.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() ?? '';
        return Number(/ (\d+) SMPP connect/.exec(row)?.[1] ?? 0) >= 3;
      },
      { timeoutMs: 20_000, what: 'the console showing the third failed attempt' },
    );
    expect(row).toMatch(/^transceiver connecting .* ECONNREFUSED/);
    expect(row).toContain(`127.0.0.1:${smsc}`);
    expect(row).not.toContain('pw');
    const output = demo.output();
    expect(output).not.toMatch(/^\s+at /m);
    expect(output.split('\n').filter((line) => /ECONNREFUSED/.test(line))).toHaveLength(1);
  }, 40_000);
});
