import { describe, expect, it } from 'vitest';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { chain } from '../../src/http/chain.js';

/** Runs `handler` with stand-ins for req and res; resolves with what reached the outer next. */
function run(handler: RequestHandler, log: string[]): Promise<unknown> {
  return new Promise((resolve) => {
    const next: NextFunction = (error?: unknown) => resolve(error ?? 'next');
    handler({} as Request, {} as Response, next);
    // A stage that answers calls nothing; the log shows how far it got.
    setImmediate(() => resolve(`answered after ${log.join(',')}`));
  });
}

describe('chain', () => {
  it('runs the stages in order and ends with the outer next when the last calls next', async () => {
    const log: string[] = [];
    const stage = (name: string): RequestHandler => (_req, _res, next) => {
      log.push(name);
      next();
    };
    expect(await run(chain(stage('a'), stage('b')), log)).toBe('next');
    expect(log).toEqual(['a', 'b']);
  });

  it('hands next(error), a throw and a rejected promise on, skipping the stages after', async () => {
    const failure = new Error('no');
    const log: string[] = [];
    const after: RequestHandler = () => log.push('after');
    expect(await run(chain((_req, _res, next) => next(failure), after), log)).toBe(failure);
    expect(await run(chain(() => { throw failure; }, after), log)).toBe(failure);
    expect(await run(chain(async () => { throw failure; }, after), log)).toBe(failure);
    expect(log).toEqual([]);
  });

  it('lets a stage answer without calling next', async () => {
    const log: string[] = [];
    const answer: RequestHandler = () => log.push('answered');
    expect(await run(chain(answer), log)).toBe('answered after answered');
  });
});
