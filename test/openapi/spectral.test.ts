/**
 * The document passes Spectral's `spectral:oas` ruleset without a single result: every
 * operation tagged with a tag the document declares, every operation described, and a
 * contact in `info`, as API catalogues and portals that lint with Spectral expect.
 */
import { Spectral } from '@stoplight/spectral-core';
import { oas } from '@stoplight/spectral-rulesets';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type OpenApiDocument } from '../../src/index.js';
import type { Json } from './doc-helpers.js';

/** Spectral's severities, by the number its results carry. */
const SEVERITY = ['error', 'warn', 'info', 'hint'];

/**
 * Spectral's `spectral:oas` ruleset, as its command line runs it (the rules it recommends),
 * on `doc` written as JSON: each result, of any severity, as `severity rule: message at path`.
 */
async function spectralProblems(doc: OpenApiDocument): Promise<string[]> {
  const spectral = new Spectral();
  // The ruleset's inferred type is not the core's RulesetDefinition, though it is one.
  spectral.setRuleset({ extends: [[oas as never, 'recommended']] });
  const results = await spectral.run(JSON.stringify(doc, null, 2));
  return results.map((r) => `${SEVERITY[r.severity] ?? r.severity} ${String(r.code)}: ${r.message} at ${r.path.join('.')}`);
}

// Spectral compiles its rules on each run: seconds, more on a busy machine.
const SLOW = { timeout: 60_000 };

describe('the document passes Spectral\u2019s spectral:oas rules', () => {
  it('has no error, warning or hint, with the defaults and with every option', SLOW, async () => {
    expect(await spectralProblems(buildOpenApiDocument())).toEqual([]);
    const everything = buildOpenApiDocument({
      basePath: '/sms/v1',
      serverUrl: 'https://sms.example.org/',
      rateLimitHeaders: 'always',
      limits: { maxMessagesPerRequest: 5 },
      info: { title: 'Acme SMS', version: '2.1.0', description: 'Acme\u2019s gateway.', contact: { name: 'Acme support', email: 'sms@acme.example' } },
    });
    expect(await spectralProblems(everything)).toEqual([]);
  });

  it('reports what it is asked to check, so the empty list above means something', SLOW, async () => {
    const doc = buildOpenApiDocument() as Json;
    delete doc.info.contact;
    delete doc.tags;
    delete doc.paths['/api/outbox/delivery-status'].get.description;
    const problems = await spectralProblems(doc as OpenApiDocument);
    expect(problems).toContainEqual(expect.stringMatching(/^warn info-contact:/));
    expect(problems).toContainEqual(expect.stringMatching(/^warn operation-tag-defined: .* at paths\./));
    expect(problems).toContainEqual(expect.stringMatching(/^warn operation-description: .* at paths\.\/api\/outbox\/delivery-status\.get$/));
  });

  it('tags each operation with one of its declared tags, and describes each', () => {
    const doc = buildOpenApiDocument() as Json;
    const declared = (doc.tags as { name: string; description: string }[]).map((tag) => tag.name);
    expect(declared).toEqual(['Send', 'Preview', 'Status', 'Cancel', 'Callbacks']);
    const tagged = Object.values<Json>(doc.paths).flatMap((item) =>
      Object.values<Json>(item).map((operation) => [operation.operationId, operation.tags, typeof operation.description]),
    );
    expect(tagged.sort()).toEqual(
      [
        ['cancelByExternalId', ['Cancel'], 'string'],
        ['cancelMessage', ['Cancel'], 'string'],
        ['findByExternalId', ['Status'], 'string'],
        ['listCallbacks', ['Callbacks'], 'string'],
        ['getDeliveryStatus', ['Status'], 'string'],
        ['listMessages', ['Status'], 'string'],
        ['pullReports', ['Status'], 'string'],
        ['premiumSend', ['Send'], 'string'],
        ['quickSend', ['Send'], 'string'],
        ['replayCallbacks', ['Callbacks'], 'string'],
        ['premiumPreview', ['Preview'], 'string'],
        ['quickPreview', ['Preview'], 'string'],
      ].sort(),
    );
  });
});
