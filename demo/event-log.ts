/**
 * One readable line per router event, for the demo's console. Every line has its control
 * characters escaped: a recipient's text, an external id or a report's field that holds a
 * newline stays inside its line instead of printing a forged one.
 */
import type { SmsRouter } from '../src/index.js';
import { escapeControl } from '../src/observe/logging.js';

/** Writes one line to the console, its control characters escaped. */
export function consoleLine(line: string): void {
  console.log(escapeControl(line));
}

/** An error in one line: its name and message, without the stack. */
function oneLine(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Logs every event of `sms`, one line each, through `log` (escaped by {@link consoleLine} by default). */
export function attachEventLog(sms: SmsRouter, log: (line: string) => void = consoleLine): void {
  sms.on('message.accepted', ({ message: m }) =>
    log(`accepted      ${m.ref} to ${m.recipient} (${m.smsCount} sms, ${m.encoding}) ref ${m.externalId}`),
  );
  sms.on('message.submitted', ({ message: m }) => log(`submitted     ${m.ref} parts ${m.parts.map((p) => p.carrierId).join(',')}`));
  sms.on('message.status', ({ message: m, previousState }) =>
    log(`status        ${m.ref} ${previousState} -> ${m.state}${m.statusReason ? ` (${m.statusReason})` : ''}`),
  );
  sms.on('message.retrying', (e) => log(`retrying      ${e.ref} attempt ${e.attempt}: ${oneLine(e.error)}`));
  sms.on('message.inbound', (e) => log(`inbound       from ${e.from} to ${e.to}: ${e.text}`));
  sms.on('dlr.sent', (e) => log(`dlr.sent      ${e.message.ref} -> ${e.url} ${e.statusCode} in ${e.durationMs} ms`));
  sms.on('dlr.retrying', (e) =>
    log(`dlr.retrying  ${e.message.ref} attempt ${e.attempt} (${e.statusCode ?? e.error}); next ${new Date(e.nextAttemptAt).toISOString()}`),
  );
  sms.on('dlr.failed', (e) => log(`dlr.failed    ${e.message.ref} after ${e.attempt} attempts (${e.statusCode ?? e.error})`));
  sms.on('inbound.sent', (e) => log(`inbound.sent  ${e.inbound.ref} -> ${e.url} ${e.statusCode} in ${e.durationMs} ms`));
  sms.on('inbound.retrying', (e) => log(`inbound.retrying ${e.inbound.ref} attempt ${e.attempt} (${e.statusCode ?? e.error})`));
  sms.on('inbound.failed', (e) => log(`inbound.failed ${e.inbound.ref} after ${e.attempt} attempts (${e.statusCode ?? e.error})`));
  sms.on('subscriber.opted_out', (e) => log(`opted_out     ${e.number} from ${e.shortCode} (${e.source})`));
  sms.on('subscriber.opted_in', (e) => log(`opted_in      ${e.number} to ${e.shortCode} (${e.source})`));
  sms.on('request.rejected', (e) => log(`rejected      ${e.status} ${e.endpoint ?? ''} ${e.details}`));
  // An outage is one line when it starts and one when it ends, not one per failed attempt:
  // the dashboard shows the attempts.
  sms.on('carrier.connection', (c) => {
    const name = c.route === undefined ? c.bind : `${c.route}/${c.bind}`;
    if (c.state === 'bound') log(`carrier       ${name} bound${c.reconnect ? ' again' : ''}`);
    else if (c.attempt === 1) log(`carrier       ${name} down (${oneLine(c.error)}); reconnecting, the dashboard shows each attempt`);
  });
  sms.on('carrier.route', (r) => log(`route         ${r.route} ${r.state}${r.reason === undefined ? '' : ` (${r.reason})`}`));
  // A connection's failure is the carrier.connection line above. Other errors: one line,
  // no stack.
  sms.on('error', (e) => {
    if (e.bind !== undefined) return;
    log(`error         [${e.source}]${e.ref === undefined ? '' : ` ${e.ref}`} ${oneLine(e.error)}`);
  });
}
