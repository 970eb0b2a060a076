/**
 * THE SEAM FOR MESSAGE SEARCH AND PAGING (to be connected to `Storage.listMessages`).
 *
 * The Storage contract has no list primitive yet; one (`listMessages`) is being added. Until
 * it lands, the console looks messages up by ref only, and its "Messages" view shows this
 * seam's answer: `null`, "the storage cannot list". Connecting it is one change here: call
 * the storage's list with the query and return its page. Nothing else in the console needs
 * to change; the view already renders a {@link MessageListPage}.
 */
import type { MessageRecord, Storage } from '../storage/contract.js';

/** What the console asks for: one principal's messages, newest first, a page at a time. */
export interface MessageListQuery {
  /** Whose messages (the Storage contract keys every message lookup by principal). */
  principalId: string;
  /** A state to keep (`queued`, `delivered`, ...), or none for every state. */
  state?: string;
  /** The opaque position the previous page ended at; none for the first page. */
  cursor?: string;
  /** Rows per page. */
  limit: number;
}

/** One page of the list. */
export interface MessageListPage {
  rows: MessageRecord[];
  /** Where the next page starts; `null` on the last page. */
  nextCursor: string | null;
}

/**
 * The principal's messages matching `query`, or `null` when `storage` cannot list messages
 * (every storage today). Connect `Storage.listMessages` here.
 */
export async function listMessagesForConsole(storage: Storage, query: MessageListQuery): Promise<MessageListPage | null> {
  void storage;
  void query;
  return null;
}
