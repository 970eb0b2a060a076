/**
 * The `smpp` package as the adapter's parts share it: loading it on demand, the name of
 * a command status, and batching the writes of one turn on a session's socket. The
 * package is an optional peer dependency, so it is loaded only when an adapter starts
 * and a host that never uses SMPP never needs it installed.
 */
import type smppLib from 'smpp';
import type { Session } from 'smpp';

/** The `smpp` package's module object. */
export type SmppLib = typeof smppLib;

/** `command_status` of success. */
export const ESME_ROK = 0x00;

/** Loads the `smpp` package; throws an `Error` saying how to install it when it is missing. */
export async function loadSmpp(): Promise<SmppLib> {
  try {
    const mod = (await import('smpp')) as unknown as { default?: SmppLib } & SmppLib;
    return mod.default ?? mod;
  } catch (error) {
    throw new Error('sms-outbox/smpp needs the `smpp` package: npm install smpp', { cause: error });
  }
}

/** The error name of an SMPP command status, e.g. `ESME_RINVPASWD`, or its hex code. */
export function statusName(lib: SmppLib, status: number): string {
  for (const [name, code] of Object.entries(lib.errors)) if (code === status) return name;
  return `0x${status.toString(16).padStart(8, '0')}`;
}

/** Sockets whose writes of this turn are being held (see {@link sendAtEndOfTurn}). */
const corked = new WeakSet<Session['socket']>();

/**
 * Holds what is written to the session's socket for the rest of this turn of the event
 * loop and sends it in one write at its end. A window of submits, or the responses to a
 * burst of receipts, then costs one system call instead of one per PDU (the socket has
 * Nagle off, so each PDU would otherwise be its own write and its own packet).
 */
export function sendAtEndOfTurn(session: Session): void {
  const socket = session.socket;
  if (corked.has(socket)) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}
