/**
 * The house's layers, checked by test/architecture/layers.test.ts: a module may import its
 * own layer and those below it, never one above, and no import may close a circle. From
 * the ground up, the path of a message: what everything uses; storage (the ledger, the
 * library's rules, over the record stores) and the carrier; events; the claim loop; the
 * worker and the report sender; keys; the MO flow; the HTTP endpoints; the router that
 * wires them; the operator console over the router; the package's faces.
 */
const LAYERS = [
  ['foundation', '^src/(util/|errors\\.ts|endpoints\\.ts|lifecycle/|sms/|numbers/|version\\.ts)'],
  ['adapters', '^src/(storage|delivery|ledger)/'],
  ['observe', '^src/observe/'],
  ['outbox', '^src/outbox/'],
  ['work', '^src/(worker|dlr)/'],
  ['auth', '^src/auth/'],
  ['inbound', '^src/inbound/'],
  ['http', '^src/(http|openapi)/'],
  ['router', '^src/router/'],
  ['console', '^src/dashboard/'],
  ['faces', '^src/(index|sqlite|postgres|mysql|smpp|testing|dashboard)\\.ts$|^src/testing/'],
];

const forbidden = [
  {
    name: 'no-circular',
    severity: 'error',
    comment: 'Modules that import each other cannot be understood, tested or moved alone.',
    from: {},
    to: { circular: true },
  },
  {
    name: 'no-unlayered',
    severity: 'error',
    comment: 'Every module under src/ belongs to a layer: add a new folder to LAYERS.',
    from: { path: '^src/', pathNot: LAYERS.map(([, path]) => path) },
    to: {},
  },
];
LAYERS.forEach(([name, path], index) => {
  const above = LAYERS.slice(index + 1).map(([, p]) => p);
  if (above.length === 0) return;
  forbidden.push({
    name: `${name}-imports-no-layer-above`,
    severity: 'error',
    comment: `${name} (${path}) may import only its own layer and those below it.`,
    from: { path },
    to: { path: above },
  });
});

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
