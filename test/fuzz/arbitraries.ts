/**
 * fast-check generators of hostile requests: valid bodies of every endpoint and form,
 * mutations of them (wrong types, missing and extra fields, huge and odd strings, deep
 * nesting, prototype keys), and odd headers. Shared by the fuzz tests and
 * `scripts/fuzz-long.ts`.
 */
import fc from 'fast-check';

/** A JSON body as sent on the wire: text, so keys such as `__proto__` survive as own keys. */
export type JsonText = string;

/** Which send endpoint and which body form a case targets. */
export type SendForm = 'create' | 'premium-messages' | 'premium-list';

/**
 * A phone number the default policy accepts: a Kenyan mobile of the 0710-0719 and
 * 0720-0729 ranges (every number of them is in use), any subscriber digits.
 */
export const validPhone = fc
  .tuple(fc.integer({ min: 10, max: 29 }), fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 6, maxLength: 6 }))
  .map(([range, rest]) => `2547${range}${rest}`);

/** Short texts that are valid messages: GSM-7, UCS-2 and surrogate pairs. */
export const validText = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
  fc.constantFrom('Hello', '\u20ac uro', '\uD83D\uDE00', 'caf\u00e9', ' '),
);

const reference = fc.oneof(fc.string({ maxLength: 20 }), fc.integer({ min: 0, max: 1_000_000 }));
const smallInt = fc.integer({ min: 0, max: 5 });

/** An item of `messages` with `field` as its recipient field. */
function item(field: 'recipient' | 'mobile_number') {
  return fc.record(
    { [field]: validPhone, message: validText, message_type: smallInt, req_type: smallInt, external_id: reference },
    { requiredKeys: [field, 'message'] },
  );
}

/** Profile codes the test keys own (see `test/helpers/gateway.ts`). */
export const OWN_PROFILES = ['12345', '22021501'] as const;

/** A valid body of `form`, as an object. */
export function validBody(form: SendForm): fc.Arbitrary<Record<string, unknown>> {
  const profile = fc.constantFrom<string | number>(...OWN_PROFILES, 12345);
  if (form === 'premium-list') {
    return fc.record(
      {
        profile_code: profile,
        to: fc.oneof(validPhone, fc.array(validPhone, { minLength: 1, maxLength: 4 })),
        message: validText,
        message_id: reference,
        message_type: smallInt,
        req_type: smallInt,
      },
      { requiredKeys: ['profile_code', 'to', 'message'] },
    );
  }
  return fc.record({
    profile_code: profile,
    messages: fc.array(item(form === 'create' ? 'recipient' : 'mobile_number'), { minLength: 1, maxLength: 4 }),
  });
}

/** Strings meant to break something: empty, huge, control characters, lone surrogates, injections. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfffy',
    '\udc00\ud800',
    '\u202e\u200b\ufeff',
    '+254712345678',
    '0712345678',
    '254 712 345 678',
    '2547123456789012345',
    '1e3',
    '-1',
    'NaN',
    'null',
    'true',
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    "'; DROP TABLE messages; --",
    '%00%ff%',
    '${7*7}',
    '../../etc/passwd',
    'http://127.0.0.1/x',
    'http://[::1]/x',
    'http://169.254.169.254/latest',
    'javascript:alert(1)',
    'https://user:pw@example.com/',
    'https://example.com/\u0000',
    'https://exa\u0000mple.com/',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.integer({ min: 1, max: 20 }).map((k) => 'x'.repeat(k * 1000)),
  fc.integer({ min: 1, max: 4 }).map((k) => '\u20ac'.repeat(k * 200)),
);

/** Numbers meant to break something: floats, huge, negative zero, out of int32. */
export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 0.5, 1e308, -1e308, 2 ** 31, 2 ** 53, 2 ** 53 + 2, Number.MIN_SAFE_INTEGER - 2, 1e-300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Any JSON value, biased to nasty leaves. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  nastyString,
  nastyNumber,
  fc.constantFrom(null, true, false, [], {}),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(nastyString, { maxLength: 3 }),
  fc.dictionary(nastyString, nastyString, { maxKeys: 3 }),
);

/** JSON text of a value nested `depth` deep in arrays or objects. */
export function deepNesting(depth: number, kind: 'array' | 'object'): JsonText {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

type Path = (string | number)[];

/**
 * A path into `value` chosen by a random walk: at each step `picks[i]` either stops (one
 * time in three, or at a leaf) or descends into one child. Cheap however big the value is.
 */
function walk(value: unknown, picks: readonly number[]): Path {
  const path: Path = [];
  let node = value;
  for (const pick of picks) {
    if (typeof node !== 'object' || node === null || pick % 3 === 0) break;
    const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (keys.length === 0) break;
    const key = keys[pick % keys.length]!;
    path.push(key);
    node = (node as Record<string | number, unknown>)[key];
  }
  return path;
}

/** Bodies grown past this by mutations are not sent; the change that grew them is skipped. */
const MAX_MUTATED_CHARS = 256 * 1024;

/** One change to a body at one path. */
type Mutation =
  | { kind: 'replace'; value: unknown }
  | { kind: 'delete' }
  | { kind: 'extra'; key: string; value: unknown }
  | { kind: 'stringify' }
  | { kind: 'numberify' }
  | { kind: 'wrap' }
  | { kind: 'nest'; depth: number }
  | { kind: 'repeat'; times: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), value: nastyValue }),
  fc.constant({ kind: 'delete' as const }),
  fc.record({
    kind: fc.constant('extra' as const),
    key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'messages', 'to', 'external_id', 'x'), fc.string({ maxLength: 8 })),
    value: nastyValue,
  }),
  fc.constant({ kind: 'stringify' as const }),
  fc.constant({ kind: 'numberify' as const }),
  fc.constant({ kind: 'wrap' as const }),
  fc.record({ kind: fc.constant('nest' as const), depth: fc.integer({ min: 2, max: 500 }) }),
  fc.record({ kind: fc.constant('repeat' as const), times: fc.integer({ min: 2, max: 1100 }) }),
);

function applyAt(root: unknown, path: Path, change: (value: unknown) => unknown, remove = false): unknown {
  if (path.length === 0) return change(root);
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root) as
    | Record<string | number, unknown>
    | unknown[];
  const key = path[path.length - 1]!;
  if (remove) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete (parent as Record<string, unknown>)[key];
  } else {
    // defineProperty: a `__proto__` key stays an own key, as JSON.parse would make it.
    Object.defineProperty(parent, key, { value: change((parent as Record<string | number, unknown>)[key]), enumerable: true, writable: true, configurable: true });
  }
  return root;
}

function mutate(root: unknown, path: Path, m: Mutation): unknown {
  switch (m.kind) {
    case 'replace':
      return applyAt(root, path, () => m.value);
    case 'delete':
      return path.length === 0 ? undefined : applyAt(root, path, () => undefined, true);
    case 'extra':
      return applyAt(root, path, (v) => {
        if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
        Object.defineProperty(v, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        return v;
      });
    case 'stringify':
      return applyAt(root, path, (v) => (typeof v === 'number' || typeof v === 'boolean' || v === null ? String(v) : v));
    case 'numberify':
      return applyAt(root, path, (v) => (typeof v === 'string' && v !== '' && !Number.isNaN(Number(v)) ? Number(v) : v));
    case 'wrap':
      return applyAt(root, path, (v) => [v]);
    case 'nest':
      return applyAt(root, path, (v) => {
        let nested = v;
        for (let i = 0; i < m.depth; i++) nested = i % 2 === 0 ? [nested] : { a: nested };
        return nested;
      });
    case 'repeat':
      return applyAt(root, path, (v) => (Array.isArray(v) ? Array.from({ length: m.times }, (_, i) => v[i % Math.max(v.length, 1)] ?? v) : v));
  }
}

/**
 * A valid body of `form` with 1 to 3 random mutations at random paths, as JSON text.
 * Some stay valid (an extra field, an integer `external_id`): the test decides by the answer.
 */
export function mutatedBody(form: SendForm): fc.Arbitrary<JsonText> {
  const change = fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), mutation);
  return fc.tuple(validBody(form), fc.array(change, { minLength: 1, maxLength: 3 })).map(([body, changes]) => {
    let text = JSON.stringify(body);
    for (const [picks, m] of changes) {
      const root: unknown = JSON.parse(text);
      const changed = mutate(root, walk(root, picks), m);
      if (changed === undefined) return '';
      const next = JSON.stringify(changed) ?? 'null';
      if (next.length <= MAX_MUTATED_CHARS) text = next;
    }
    return text;
  });
}

/** Any body text at all: JSON values, near-JSON, deep nesting, binary junk. */
export const anyBodyText: fc.Arbitrary<JsonText> = fc.oneof(
  fc.json({ maxDepth: 4 }),
  nastyValue.map((v) => JSON.stringify(v) ?? 'null'),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('', '{', '}', '{"a":', '[1,]', '{"a":1,}', 'null', '"x"', '1', 'true', '{"__proto__":{"x":1}}', '\ufeff{}', '{}\u0000'),
  fc.tuple(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([d, k]) => deepNesting(d, k)),
  fc.integer({ min: 1, max: 200_000 }).map((n) => `{"profile_code":"12345","messages":[${'{},'.repeat(n)}{}]}`),
);

/** Values for `Content-Type`, valid and not. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      undefined,
      '',
      'APPLICATION/JSON',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset="utf-8"',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset=utf-7',
      'application/json; charset=bogus-charset',
      'application/json; charset=',
      'application/json; ;;=;',
      'application/json, text/plain',
      'application/vnd.api+json',
      'application/merge-patch+json',
      'text/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      '*/*',
      '\u00ff/\u00ff',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 60 }) },
);

/** Values for `X-API-Key`: the right key among missing, wrong, empty, huge and odd ones. */
export function apiKey(good: readonly string[]): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...good) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom(undefined, '', ' ', 'null', `${good[0]} `, ` ${good[0]}`, good[0]!.toUpperCase(), `${good[0]}, ${good[0]}`),
        fc.string({ unit: 'grapheme-ascii', maxLength: 100 }),
        // Up to 10 KB: with a 4 KB URL still under Node's 16 KiB header limit (431 is Node's).
        fc.integer({ min: 1, max: 10 }).map((k) => 'k'.repeat(k * 1000)),
      ),
    },
  );
}

/** A `message_ref` path segment: printable, percent-encoded, malformed escapes, traversal. */
export const refSegment: fc.Arbitrary<string> = fc.oneof(
  fc.uuid(),
  fc.string({ unit: fc.constantFrom(...'abcdefXYZ0123456789-_.~'), minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map(encodeURIComponent),
  fc.constantFrom('%', '%0', '%zz', '%E0%A4%A', '%ff', '%C0%AF', '%00', '%ED%A0%80', '..', '%2e%2e', '%2F', 'a%2Fb', '%u0041', 'x'.repeat(4000)),
);

/** An `external_id` query string (after `?`): single, repeated, bracketed, malformed, empty. */
export const externalIdQuery: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => `external_id=${encodeURIComponent(s)}`),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => {
    try {
      return `external_id=${encodeURIComponent(s)}`;
    } catch {
      return 'external_id=%ED%A0%80';
    }
  }),
  fc.constantFrom(
    '',
    'external_id',
    'external_id=',
    'external_id=a&external_id=b',
    'external_id[]=a',
    'external_id[x]=a',
    'external_id=%',
    'external_id=%zz',
    'external_id=%00',
    'external_id=%ED%A0%80',
    'EXTERNAL_ID=a',
    '__proto__=x&external_id=a',
    'external_id=' + 'x'.repeat(4000),
  ),
);
