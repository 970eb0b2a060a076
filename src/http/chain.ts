/**
 * `chain`: several request stages as one Express handler. Express dispatches every stage of
 * a route as a layer of its own (a method check, a try/catch and a promise check per
 * stage); the stages of an endpoint always run together, so they are chained here once.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isPromiseLike } from '../util/settle.js';

/**
 * Runs `stages` in order as one handler, with Express's semantics for each: calling
 * `next()` starts the following stage, `next(error)` (or a throw, or a rejected promise)
 * skips the rest and hands the error on.
 */
export function chain(...stages: RequestHandler[]): RequestHandler {
  return stages.reduceRight<RequestHandler>(
    (rest, stage) => (req: Request, res: Response, next: NextFunction) => {
      const goOn = (error?: unknown): void => {
        if (error === undefined || error === null) rest(req, res, next);
        else next(error);
      };
      try {
        const result: unknown = stage(req, res, goOn);
        if (isPromiseLike(result)) Promise.resolve(result).catch(next);
      } catch (error) {
        next(error);
      }
    },
    (_req, _res, next) => next(),
  );
}
