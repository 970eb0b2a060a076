/**
 * The demo's generated key outlives a restart, as the messages do: the key a reader
 * exported after the first `npm start` still reads the messages after the second, through
 * the API and the console.
 */
import { stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { demoFiles, startDemo, stopDemo, type RunningDemo } from '../helpers/demo.js';
import { eventually } from '../helpers/poll.js';

const { path: dbFile, running } = demoFiles('sms-outbox-demo-key-');

/** Starts the demo with no key of the reader's on `db`; resolves with its origin and the key it printed. */
async function start(db: string): Promise<{ demo: RunningDemo; origin: string; key: string }> {
  const demo = startDemo({ SMS_DB: db, SMS_API_KEY: '' });
  running.push(demo);
  const origin = await demo.origin;
  const key = await eventually(() => /^SMS_API_KEY=(\S+)$/m.exec(demo.output())?.[1], { timeoutMs: 10_000, what: 'the key line' });
  return { demo, origin, key };
}

describe('the demo\u2019s generated key', () => {
  it('is the same after a restart on the same database, and reads the messages sent before it', async () => {
    const db = dbFile('kept.db');
    const first = await start(db);
    expect(first.demo.output()).toContain(`kept in ${db}.key`);
    const res = await fetch(`${first.origin}/api/outbox/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': first.key },
      body: JSON.stringify({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Before the restart', external_id: 'kept-1' }] }),
    });
    expect(res.status).toBe(200);
    const [{ message_ref: ref }] = (await res.json()) as [{ message_ref: string }];
    await stopDemo(first.demo.child);

    const second = await start(db);
    expect(second.key).toBe(first.key);
    const status = await fetch(`${second.origin}/api/outbox/delivery-status/${ref}`, { headers: { 'X-API-Key': first.key } });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ message_ref: ref, external_id: 'kept-1' });
    // The console reads storage: the new process finds the message its events never saw.
    const page = await fetch(`${second.origin}/console/messages?principal=demo&external_id=kept-1`, { headers: { 'X-API-Key': first.key } });
    expect(await page.text()).toContain(`ref=${ref}`);
    // Readable by its owner only: the key opens the whole send API.
    expect((await stat(`${db}.key`)).mode & 0o077).toBe(0);
  }, 60_000);

  it('is another one for another database', async () => {
    const a = await start(dbFile('a.db'));
    const b = await start(dbFile('b.db'));
    expect(a.key).not.toBe(b.key);
  }, 60_000);
});
