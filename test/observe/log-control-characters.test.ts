/**
 * Log forging: text from a client or a carrier that holds a newline, a terminal escape or a
 * Unicode line separator must not start a line of its own, or restyle one, in the host's
 * logs. Every line the package writes has its control characters escaped.
 */
import { describe, expect, it } from 'vitest';
import { attachLogger, escapeControl, unheardErrorWriter } from '../../src/observe/logging.js';
import type { SmsLogger } from '../../src/observe/options.js';
import { SmsEventEmitter } from '../../src/observe/events.js';

/** What a reader of the log would take for separate lines. */
const LINE_BREAK = /[\n\r\u2028\u2029\u0085]/;

describe('escapeControl', () => {
  it('writes newlines, escapes, separators and direction overrides as escapes, and leaves text alone', () => {
    expect(escapeControl('ok\nforged\r\t\u001b[2J\u2028\u202e\u0085 end')).toBe('ok\\nforged\\r\\t\\u001b[2J\\u2028\\u202e\\u0085 end');
    expect(escapeControl('Hello \u00e9t\u00e9 \u{1f600} 254712345678')).toBe('Hello \u00e9t\u00e9 \u{1f600} 254712345678');
  });
});

describe('the package\u2019s log lines', () => {
  it('the stderr line of an unheard error keeps a forged line inside it', () => {
    const written: string[] = [];
    const write = unheardErrorWriter({ write: (line) => written.push(line) });
    write({ source: 'storage', ref: 'r-1\nsms-outbox error [storage]: forged', error: new Error('boom \u001b[31mred\u001b[0m\u2028forged'), code: 'STORAGE_FAILED' } as never);
    expect(written).toHaveLength(1);
    const line = written[0]!;
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(LINE_BREAK);
    expect(line).not.toContain('\u001b');
    expect(line).toContain('r-1\\nsms-outbox error [storage]: forged');
  });

  it('a logger\u2019s message is escaped: a console-style logger prints it as it is', () => {
    const messages: string[] = [];
    const record: SmsLogger['info'] = (_obj, msg) => messages.push(msg);
    const events = new SmsEventEmitter();
    attachLogger(events, { info: record, warn: record, error: record, debug: record });
    events.emit('carrier.route', { route: 'net\n[info] forged', state: 'down', reason: 'unbound', via: 'agg\u001b[8m' } as never);
    expect(messages).toHaveLength(1);
    expect(messages[0]).not.toMatch(LINE_BREAK);
    expect(messages[0]).toBe('route net\\n[info] forged down (unbound); its messages go to agg\\u001b[8m');
  });
});
