/**
 * The console's message list: one principal's messages, newest first, a page at a time,
 * read with the storage's `listMessages` (the index the `GET {base}/messages` endpoint
 * reads). The console's cursor is its own plain `createdAt.seq`: it never leaves the
 * operator's browser for a customer's program, so it need not be opaque.
 */
import type { MessageRecord, Storage } from '../storage/contract.js';
import type { ListPosition } from '../storage/message-list.js';

/** What the console asks for. */
export interface ConsoleListQuery {
  /** Whose messages (the storage keys every message lookup by principal). */
  principalId: string;
  /** Where the page starts: the `nextCursor` of the page before; none for the newest. */
  cursor?: string;
  /** Rows per page. */
  limit: number;
}

/** One page of the list. */
export interface ConsoleListPage {
  rows: MessageRecord[];
  /** Where the next page starts; `null` on the last page. */
  nextCursor: string | null;
}

/** The position a console cursor names, or `undefined` for none or a text it did not write. */
export function positionOf(cursor: string | undefined): ListPosition | undefined {
  const match = cursor === undefined ? null : /^(\d{1,16})\.(\d{1,16})$/.exec(cursor);
  return match === null ? undefined : { createdAt: Number(match[1]), seq: Number(match[2]) };
}

/** The principal's messages of `query`'s page, or `null` when `storage` cannot list messages. */
export async function listMessagesForConsole(storage: Storage, query: ConsoleListQuery): Promise<ConsoleListPage | null> {
  if (storage.listMessages === undefined) return null;
  const after = positionOf(query.cursor);
  const page = await storage.listMessages({ principalId: query.principalId, limit: query.limit, ...(after === undefined ? {} : { after }) });
  return { rows: page.messages, nextCursor: page.next === null ? null : `${page.next.createdAt}.${page.next.seq}` };
}
