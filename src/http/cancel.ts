/**
 * `DELETE /messages/:message_ref` and `DELETE /messages?external_id=...`: cancel what has not
 * gone yet (docs/endpoints.md#cancel). Storage decides each message in one atomic step
 * (`Storage.cancelMessages`): one still `scheduled`, or `queued` with nothing submitted and no
 * worker's lease on it, ends `cancelled` with its report; any other is named with its state.
 */
import type { RequestHandler, Response } from 'express';
import { SmsError } from '../errors.js';
import type { Storage, Transition } from '../storage/contract.js';
import { principalOf } from './authenticate.js';
import { sendJsonText } from './respond.js';
import { externalIdOf } from './status.js';

/** Most messages one `external_id` cancel looks at: the caller's newest with that reference. */
export const CANCEL_BY_EXTERNAL_ID_LIMIT = 1000;

/** What the cancel handlers need. */
export interface CancelDeps {
  /** A storage with `cancelMessages` (the routes are mounted only then). */
  storage: Storage & Required<Pick<Storage, 'cancelMessages'>>;
  now: () => number;
  /** Every cancellation goes here: announced (`message.status`), and its report sent. */
  onTransition: (transition: Transition) => void;
}

const notFound = new SmsError('NOT_FOUND');

/** Cancels the principal's `refs` and answers 200 with both lists, or 404 when none is the caller's. */
async function cancel(deps: CancelDeps, res: Response, refs: readonly string[]): Promise<void> {
  const result = await deps.storage.cancelMessages(principalOf(res).id, refs, deps.now());
  if (result.cancelled.length === 0 && result.notCancelled.length === 0) throw notFound;
  sendJsonText(
    res,
    200,
    JSON.stringify({
      cancelled: result.cancelled.map((transition) => transition.message.ref),
      not_cancelled: result.notCancelled.map(({ ref, state }) => ({ message_ref: ref, status: state })),
    }),
  );
  for (const transition of result.cancelled) deps.onTransition(transition);
}

/** `DELETE /messages/:message_ref`: 404 unless the message exists and is the caller's. */
export function cancelByRef(deps: CancelDeps): RequestHandler {
  return async (req, res) => {
    const ref = String(req.params.message_ref);
    // No stored string holds U+0000 (validate-request.ts), and PostgreSQL refuses it in a lookup.
    if (ref.includes('\u0000')) throw notFound;
    await cancel(deps, res, [ref]);
  };
}

/** `DELETE /messages?external_id=...`: the caller's newest messages with that reference. */
export function cancelByExternalId(deps: CancelDeps): RequestHandler {
  return async (req, res) => {
    const externalId = externalIdOf(req);
    if (typeof externalId !== 'string' || externalId === '') {
      throw new SmsError('VALIDATION_FAILED', 'external_id: is required (one query parameter)');
    }
    if (externalId.includes('\u0000')) throw notFound;
    const messages = await deps.storage.findByExternalId(principalOf(res).id, externalId, CANCEL_BY_EXTERNAL_ID_LIMIT);
    if (messages.length === 0) throw notFound;
    await cancel(deps, res, messages.map((message) => message.ref));
  };
}
