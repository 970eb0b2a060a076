/**
 * `GET /delivery-status?external_id=...` finds the same messages on every host: the router
 * reads the parameter from the URL itself, so neither the Express version's default query
 * parser (Express 4: qs, Express 5: node:querystring) nor a host's `query parser` setting
 * changes what a client's query means.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { SmsRouter } from '../../src/index.js';
import { createGateway, KEY } from '../helpers/gateway.js';

const routers: SmsRouter[] = [];
afterEach(async () => {
  for (const router of routers.splice(0)) await router.close();
});

// A client that encoded the space but not the percent sign: qs gives up on the whole value,
// node:querystring decodes what it can. The router reads it the second way on every host.
const EXTERNAL_ID = '50%off now';
const SLOPPY_QUERY = 'external_id=50%off%20now';

describe.each([['extended'], ['simple'], [false]] as const)("a host whose query parser is '%s'", (parser) => {
  it('finds a message by external_id as every other host does', async () => {
    const built = createGateway();
    routers.push(built.sms);
    built.app.set('query parser', parser);
    const sent = await request(built.app)
      .post('/api/outbox/create')
      .set('X-API-Key', KEY)
      .send({ profile_code: '12345', messages: [{ recipient: '254712345678', message: 'Hi', external_id: EXTERNAL_ID }] });
    expect(sent.status).toBe(200);

    const found = await request(built.app).get(`/api/outbox/delivery-status?${SLOPPY_QUERY}`).set('X-API-Key', KEY);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject([{ message_ref: sent.body[0].message_ref, external_id: EXTERNAL_ID }]);

    const repeated = await request(built.app).get('/api/outbox/delivery-status?external_id=a&external_id=b').set('X-API-Key', KEY);
    expect(repeated.status).toBe(422);
  });
});
