/**
 * Where a message's state change goes once storage has recorded it: announced to the host
 * as `message.status`, and, when it ended a message with a callback URL, on to the report
 * dispatcher. The worker, the receipt handler and the receipt timeout all report their
 * transitions here, so the router only wires them.
 */
import type { Emit } from '../observe/events.js';
import { isTerminal } from '../lifecycle/states.js';
import type { Transition } from '../storage/contract.js';

/** What transitions need of the report dispatcher. */
export interface ReportPort {
  /** Claims soon: a report has just become due. */
  wake(): void;
}

/** Returns the function every recorded transition is passed to. */
export function routeTransitions(emit: Emit, dispatcher: ReportPort): (transition: Transition) => void {
  return (transition) => {
    emit('message.status', { message: transition.message, previousState: transition.previousState });
    // A report stored leased to this instance is handed over by the receipt handler that
    // asked for the lease (outbox/hand-off.ts); any other is claimed.
    if (transition.leasedReport === undefined && isTerminal(transition.message.state) && transition.message.callbackUrl !== null) dispatcher.wake();
  };
}
