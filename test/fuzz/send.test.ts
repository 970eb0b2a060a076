/**
 * Property tests of the send endpoints: whatever a client sends, the answer is a documented
 * status, an error is a clean `{ "details", "code" }`, and a refused request stores nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY } from '../helpers/gateway.js';
import { anyBodyText, apiKey, contentType, mutatedBody, validBody, type SendForm } from './arbitraries.js';
import { FUZZ_KEYS, sendAndCheck, startFuzzGateway, type FuzzGateway, type FuzzRequest } from './harness.js';

/** Runs per property; the file's total is about 3,900 requests. */
const RUNS = Number(process.env.FUZZ_RUNS_SCALE ?? 1);

let gateway: FuzzGateway;
const statuses = new Map<number, number>();

beforeAll(async () => {
  gateway = await startFuzzGateway();
});
afterAll(async () => {
  await gateway?.close();
});

const pathOf = (form: SendForm) => (form === 'create' ? '/api/outbox/create' : '/api/outbox/premium');

async function run(request: FuzzRequest): Promise<void> {
  const answer = await sendAndCheck(gateway, request);
  statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
}

describe('send endpoints under hostile bodies', () => {
  it('accepts every valid body of every form with 200', async () => {
    const form = fc.constantFrom<SendForm>('create', 'premium-messages', 'premium-list');
    await fc.assert(
      fc.asyncProperty(form.chain((f) => fc.tuple(fc.constant(f), validBody(f))), async ([f, body]) => {
        const answer = await sendAndCheck(gateway, {
          method: 'POST',
          path: pathOf(f),
          headers: { 'content-type': 'application/json', 'x-api-key': KEY },
          body: JSON.stringify(body),
        });
        expect(answer.status).toBe(200);
      }),
      { numRuns: 300 * RUNS },
    );
  });

  for (const [form, runs] of [['create', 1200], ['premium-messages', 700], ['premium-list', 700]] as const) {
    it(`answers every mutation of a valid ${form} body with a documented status and stores nothing unless 200`, async () => {
      await fc.assert(
        fc.asyncProperty(mutatedBody(form), apiKey(FUZZ_KEYS), async (body, key) => {
          await run({ method: 'POST', path: pathOf(form), headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
        }),
        { numRuns: runs * RUNS },
      );
    });
  }

  it('answers any body text, content type and key on either endpoint without a 5xx or a leak', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<SendForm>('create', 'premium-messages'),
        anyBodyText,
        contentType,
        apiKey(FUZZ_KEYS),
        async (form, body, type, key) => {
          await run({ method: 'POST', path: pathOf(form), headers: { 'content-type': type, 'x-api-key': key }, body });
        },
      ),
      { numRuns: 1000 * RUNS },
    );
  });

  it('answers 429 cleanly and stores nothing when the rate limits are hit', async () => {
    const limited = await startFuzzGateway({
      rateLimit: { requests: { limit: 40 }, messages: { limit: 60 }, failedAuth: { limit: 5 } },
    });
    try {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom<SendForm>('create', 'premium-messages'), mutatedBody('create'), apiKey(FUZZ_KEYS), async (form, body, key) => {
          const answer = await sendAndCheck(limited, {
            method: 'POST',
            path: pathOf(form),
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            body,
          });
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        }),
        { numRuns: 200 * RUNS },
      );
    } finally {
      await limited.close();
    }
  });

  it('reached every kind of refusal (the generators are not too tame)', () => {
    for (const status of [200, 400, 401, 403, 413, 415, 422, 429]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
  });
});
