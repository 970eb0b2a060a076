/**
 * The console's guard and its refusals over HTTP (no browser): the host's auth hook (a
 * throw is a no), the same-origin check (Origin, else Referer; neither is a refusal), the
 * CSRF token tied to its cookie, and the 4xx `{ details, code }` of bad action fields, each
 * storing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { createSmsDashboard } from '../../src/dashboard.js';
import { STAFF_COOKIE, startConsoleHost, type ConsoleHost } from './console-host.js';

const staff = `${STAFF_COOKIE.name}=${STAFF_COOKIE.value}`;

describe('the console guard', () => {
  let host: ConsoleHost;
  /** The browser's CSRF cookie and the token of its forms. */
  let cookie: string;
  let token: string;

  beforeAll(async () => {
    host = await startConsoleHost();
    const res = await fetch(`${host.console}/credit`, { headers: { Cookie: staff } });
    cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
    token = /name="_csrf" value="([^"]+)"/.exec(await res.text())![1]!;
  });
  afterAll(() => host?.close());

  const topUp = (headers: Record<string, string>, body: string): Promise<Response> =>
    fetch(`${host.console}/actions/top-up`, {
      method: 'POST', redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `${staff}; ${cookie}`, ...headers },
      body,
    });

  it('takes an action with the token, from the same origin by Origin or by Referer alone', async () => {
    const before = await host.sms.credit!.balance('acme');
    expect((await topUp({ Origin: host.origin }, `_csrf=${token}&principal=acme&units=2`)).status).toBe(303);
    expect((await topUp({ Referer: `${host.console}/credit` }, `_csrf=${token}&principal=acme&units=3`)).status).toBe(303);
    expect(await host.sms.credit!.balance('acme')).toBe(before + 5);
  });

  it('refuses an action with no Origin or Referer, a token of another cookie, or bad fields, storing nothing', async () => {
    const before = await host.sms.credit!.balance('acme');
    const noSource = await topUp({}, `_csrf=${token}&principal=acme&units=2`);
    expect([noSource.status, ((await noSource.json()) as { code: string }).code]).toEqual([403, 'CROSS_ORIGIN']);
    const otherCookie = await fetch(`${host.console}/actions/top-up`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `${staff}; sms_dashboard_csrf=${'x'.repeat(32)}`, Origin: host.origin },
      body: `_csrf=${token}&principal=acme&units=2`,
    });
    expect([otherCookie.status, ((await otherCookie.json()) as { code: string }).code]).toEqual([403, 'CSRF_TOKEN_INVALID']);
    for (const units of ['0', '-1', '1.5', 'ten', '']) {
      const bad = await topUp({ Origin: host.origin }, `_csrf=${token}&principal=acme&units=${units}`);
      expect(bad.status, units).toBe(400);
      expect(await bad.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await host.sms.credit!.balance('acme')).toBe(before);
  });

  it('answers a cancel of an unknown message 404, and an over-long form 400', async () => {
    const res = await fetch(`${host.console}/actions/cancel`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: `${staff}; ${cookie}`, Origin: host.origin },
      body: `_csrf=${token}&principal=acme&ref=00000000-0000-7000-8000-000000000000`,
    });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
    const long = await topUp({ Origin: host.origin }, `_csrf=${token}&pad=${'x'.repeat(5000)}`);
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('counts an auth hook that throws or rejects as a refusal', async () => {
    for (const auth of [() => { throw new Error('session store down'); }, () => Promise.reject(new Error('down'))]) {
      const app = express().use('/c', createSmsDashboard(host.sms, { auth }));
      const res = await request(app).get('/c/');
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'DASHBOARD_FORBIDDEN' });
    }
  });

  it('refuses unknown and wrong options with coded OptionErrors', () => {
    expect(() => createSmsDashboard(host.sms, { auth: () => true, colour: 'red' } as never)).toThrow(expect.objectContaining({ code: 'UNKNOWN_OPTION' }));
    expect(() => createSmsDashboard(host.sms, { auth: 'yes' } as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => createSmsDashboard(host.sms, { allowUnauthenticated: false })).toThrow(expect.objectContaining({ code: 'DASHBOARD_UNGUARDED' }));
  });
});
