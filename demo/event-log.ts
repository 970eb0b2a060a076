/**
 * One readable line per router event, for the demo's console.
 */
import type { SmsRouter } from '../src/index.js';

/** Logs every event of `sms` to the console, one line each. */
export function attachEventLog(sms: SmsRouter, log: (line: string) => void = console.log): void {
  sms.on('message.accepted', ({ message: m }) =>
    log(`accepted      ${m.ref} to ${m.recipient} (${m.smsCount} sms, ${m.encoding}) ref ${m.externalId}`),
  );
  sms.on('message.submitted', ({ message: m }) => log(`submitted     ${m.ref} parts ${m.parts.map((p) => p.carrierId).join(',')}`));
  sms.on('message.status', ({ message: m, previousState }) =>
    log(`status        ${m.ref} ${previousState} -> ${m.state}${m.statusReason ? ` (${m.statusReason})` : ''}`),
  );
  sms.on('message.retrying', (e) => log(`retrying      ${e.ref} attempt ${e.attempt}: ${String(e.error)}`));
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
  sms.on('error', (e) => log(`error         [${e.source}] ${e.error instanceof Error ? e.error.stack : String(e.error)}`));
}
