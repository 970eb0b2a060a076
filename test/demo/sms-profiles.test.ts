/**
 * `SMS_PROFILES`: the demo key owns the profiles a real client already uses, with their
 * senders, so the client runs against the demo unchanged; a malformed value stops the demo at
 * start, saying what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { parseSmsProfiles } from '../../demo/sms-profiles.js';
import { demoFiles, startDemo } from '../helpers/demo.js';
import { eventually } from '../helpers/poll.js';

const KEY = 'sms-profiles-test-key';
const { path: dbFile, running } = demoFiles('sms-outbox-demo-profiles-');

function post(origin: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}/api/outbox/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': KEY },
    body: JSON.stringify(body),
  });
}

describe('the demo with SMS_PROFILES', () => {
  it("owns the client's profile codes and senders instead of its own", async () => {
    const demo = startDemo({ SMS_DB: dbFile('profiles.db'), SMS_API_KEY: KEY, SMS_PROFILES: '777:ACME|ACMEALERTS, 22021501' });
    running.push(demo);
    const origin = await demo.origin;
    await eventually(() => /^profile codes: .*$/m.exec(demo.output())?.[0], { timeoutMs: 10_000, what: 'the profile line' });
    expect(demo.output()).toMatch(/^profile codes: 777 \(from ACME, ACMEALERTS\), 22021501$/m);

    const quick = await post(origin, 'create', { profile_code: '777', messages: [{ recipient: '254712345678', message: 'Hi', external_id: 'c-1' }] });
    expect(quick.status).toBe(200);
    const [{ message_ref: ref }] = (await quick.json()) as [{ message_ref: string }];
    const status = await eventually(
      async () => {
        const res = await fetch(`${origin}/api/outbox/delivery-status/${ref}`, { headers: { 'X-API-Key': KEY } });
        const body = (await res.json()) as { status: string };
        return body.status === 'delivered' ? body : undefined;
      },
      { timeoutMs: 15_000, what: 'the message delivered' },
    );
    expect(status).toMatchObject({ external_id: 'c-1', status: 'delivered' });

    // The premium list form's `from` must be one of the profile's senders.
    const fromSender = await post(origin, 'premium', { profile_code: '777', to: ['254712345678'], message: 'Hi', from: 'ACMEALERTS', message_id: 'p-1' });
    expect(fromSender.status).toBe(200);
    const fromOther = await post(origin, 'premium', { profile_code: '777', to: ['254712345678'], message: 'Hi', from: 'OTHER', message_id: 'p-2' });
    expect(fromOther.status).toBe(422);
    expect(await post(origin, 'create', { profile_code: '22021501', messages: [{ recipient: '254712345678', message: 'Hi' }] })).toHaveProperty('status', 200);
    // The demo's default profile is not the client's.
    const theirs = await post(origin, 'create', { profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi' }] });
    expect(theirs.status).toBe(422);
    expect(await theirs.json()).toMatchObject({ code: 'INVALID_PROFILE' });
  }, 40_000);

  it('stops at start, saying what is wrong, when malformed', async () => {
    const demo = startDemo({ SMS_DB: dbFile('bad.db'), SMS_API_KEY: KEY, SMS_PROFILES: '777:ACME,,22021501' });
    running.push(demo);
    await expect(demo.origin).rejects.toThrow(/exited \(1\)[\s\S]*sms-outbox demo: SMS_PROFILES: entry 2 \(""\) has no profile code; expected profiles separated by commas/);
  }, 40_000);
});

describe('parseSmsProfiles', () => {
  it('reads codes with their senders, and gives the demo its own two when unset or empty', () => {
    expect(parseSmsProfiles('12345:ACME,22021501, 777 : BANK | 22021 ')).toEqual([
      { code: '12345', senders: ['ACME'] },
      { code: '22021501' },
      { code: '777', senders: ['BANK', '22021'] },
    ]);
    expect(parseSmsProfiles(undefined)).toEqual([{ code: '12345' }, { code: '22021501' }]);
    expect(parseSmsProfiles(' ')).toEqual([{ code: '12345' }, { code: '22021501' }]);
  });

  it('refuses a malformed value, naming the entry', () => {
    expect(() => parseSmsProfiles('12345:')).toThrow('entry 1 ("12345:") has an empty sender');
    expect(() => parseSmsProfiles('12345:A:B')).toThrow("entry 1 (\"12345:A:B\") has more than one ':'");
    expect(() => parseSmsProfiles('12345,12345')).toThrow('entry 2 ("12345"): profile 12345 is listed twice');
    expect(() => parseSmsProfiles('12 345')).toThrow(/entry 1 \("12 345"\): the code may hold letters, digits/);
    expect(() => parseSmsProfiles('777:AVERYLONGSENDERNAME')).toThrow(/sender "AVERYLONGSENDERNAME" is neither up to 15 digits nor up to 11/);
  });
});
