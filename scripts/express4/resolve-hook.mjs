/**
 * Module resolve hook for the suite's Express 4 run: `express` (and `express/...`) imported
 * from a file of this repository resolves to the `express4` alias package. Files outside the
 * repository keep their own `express`: the packaging test's scratch projects install the
 * Express version they test and must get exactly that one.
 */
const REPO = new URL('../../', import.meta.url).href;

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if ((specifier === 'express' || specifier.startsWith('express/')) && parent !== undefined && parent.startsWith(REPO)) {
    return nextResolve(`express4${specifier.slice('express'.length)}`, context);
  }
  return nextResolve(specifier, context);
}
