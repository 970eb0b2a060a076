/**
 * `GET {base}/reports?after=<cursor>`: the caller's delivery reports in the order they were
 * made, each in the body a callback would have carried (dlr/payload.ts), for a client that
 * pulls them rather than hosts a callback URL (docs/reports-pull.md). `next` is the cursor
 * to send as `after` next time: kept by the client, it gets every report once.
 *
 * @module
 */
import { parse as parseQuery } from 'node:querystring';
import type { Request, RequestHandler } from 'express';
import { buildReport, type ReportFormatOf } from '../dlr/payload.js';
import { SmsError } from '../errors.js';
import type { Storage } from '../storage/contract.js';
import { principalOf } from './authenticate.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from './list-query.js';
import { sendJsonText } from './respond.js';

/** A storage that keeps the report log (the route is mounted only then). */
export type ReportLogStorage = Storage & Required<Pick<Storage, 'readReports'>>;

/** What a report cursor's text starts with: its format. */
const CURSOR_FORMAT = 'r1';

/** The cursor after the report of key `seq`. */
export function encodeReportCursor(seq: number): string {
  return Buffer.from(`${CURSOR_FORMAT}.${seq}`, 'utf8').toString('base64url');
}

/** The key a report cursor names; throws `INVALID_CURSOR` for a text this endpoint did not give. */
function decodeReportCursor(text: string): number {
  const parts = /^[A-Za-z0-9_-]{1,100}$/.test(text) ? Buffer.from(text, 'base64url').toString('utf8').split('.') : [];
  const [format, seq] = parts;
  if (parts.length !== 2 || format !== CURSOR_FORMAT || seq === undefined || !/^\d{1,16}$/.test(seq) || !Number.isSafeInteger(Number(seq))) {
    throw new SmsError('INVALID_CURSOR');
  }
  return Number(seq);
}

/** The parameters the endpoint reads. */
const PARAMETERS = ['after', 'limit'] as const;

/** `after` (the key, `null` from the start) and `limit` of `req`; a coded 4xx for anything else. */
function readReportQuery(req: Request): { after: number | null; limit: number } {
  const start = req.url.indexOf('?');
  const end = req.url.indexOf('#');
  const raw = start === -1 ? {} : parseQuery(req.url.slice(start + 1, end === -1 ? undefined : end));
  let after: number | null = null;
  let limit = DEFAULT_LIST_LIMIT;
  for (const [name, value] of Object.entries(raw)) {
    if (!(PARAMETERS as readonly string[]).includes(name)) throw new SmsError('INVALID_LIST_QUERY', `${name}: is not a parameter of this endpoint (${PARAMETERS.join(', ')})`);
    if (typeof value !== 'string') throw new SmsError('INVALID_LIST_QUERY', `${name}: give it once`);
    if (name === 'after') after = value === '' ? null : decodeReportCursor(value);
    else {
      if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_LIST_LIMIT) {
        throw new SmsError('INVALID_LIST_QUERY', `limit: must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
      }
      limit = Number(value);
    }
  }
  return { after, limit };
}

/** The handler of `GET {base}/reports`, building each report in its message's format (else its principal's, `formatOf`). */
export function pullReports(storage: ReportLogStorage, formatOf: ReportFormatOf): RequestHandler {
  return async (req, res) => {
    const { after, limit } = readReportQuery(req);
    const entries = await storage.readReports(principalOf(res).id, after, limit);
    const reports = entries.map((entry) => buildReport(entry.uid, entry.message, entry.message.reportFormat ?? formatOf(entry.message.principalId)));
    // With nothing new, the cursor given: a client always keeps `next` and asks with it.
    const last = entries.at(-1)?.seq ?? after;
    sendJsonText(res, 200, JSON.stringify({ reports, next: last === null ? null : encodeReportCursor(last) }));
  };
}
