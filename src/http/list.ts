/**
 * `GET {base}/messages`: the caller's messages, newest first, filtered and paged by an
 * opaque cursor (docs/messages-list.md). Each item is the status lookup's view
 * (`statusView`), so a client reads one shape wherever it sees a message.
 *
 * @module
 */
import type { RequestHandler } from 'express';
import type { MessageListPage, Storage } from '../storage/contract.js';
import { principalOf } from './authenticate.js';
import { encodeCursor, readListQuery } from './list-query.js';
import { sendJsonText } from './respond.js';
import { statusView } from './status.js';

/** A storage that lists messages (the route is mounted only then). */
export type ListingStorage = Storage & Required<Pick<Storage, 'listMessages'>>;

/** The handler of `GET {base}/messages` over `storage`. */
export function listMessages(storage: ListingStorage): RequestHandler {
  return async (req, res) => {
    const query = readListQuery(req, principalOf(res).id);
    const page: MessageListPage = query === null ? { messages: [], next: null } : await storage.listMessages(query);
    sendJsonText(res, 200, JSON.stringify({ messages: page.messages.map(statusView), next: page.next === null ? null : encodeCursor(page.next) }));
  };
}
