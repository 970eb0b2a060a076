/**
 * The message list over a record store: one page of a principal's messages, read with one
 * row more than the page so that the page says whether another follows without a second
 * read.
 *
 * @module
 */
import type { MessageListPage, MessageListQuery } from '../storage/message-list.js';
import type { MessageRow } from '../storage/record-store.js';
import { copyRecord } from './copy-record.js';

/** The page `query` asks for, from `listRows` (`RecordStore.listMessages` or `listCallbacks`): the records copied, `next` the last one's place when more match. */
export async function listPage<Query extends Pick<MessageListQuery, 'limit'>>(listRows: (query: Query) => Promise<MessageRow[]>, query: Query): Promise<MessageListPage> {
  const limit = Math.max(1, Math.floor(query.limit));
  const rows = await listRows({ ...query, limit: limit + 1 });
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    messages: page.map((row) => copyRecord(row.record)),
    next: more && last !== undefined ? { createdAt: last.record.createdAt, seq: last.seq } : null,
  };
}
