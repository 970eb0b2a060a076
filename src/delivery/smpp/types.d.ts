/**
 * The parts of the `smpp` package (0.5.x, CommonJS, no types of its own) that the SMPP
 * adapter and its test SMSC use. Field names are those of the SMPP specification.
 */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  namespace smpp {
    /** A request or response PDU: header fields, body fields and TLVs by spec name. */
    interface PDU {
      command: string;
      command_id: number;
      command_status: number;
      sequence_number: number;
      [field: string]: unknown;
      /** True for a `*_resp` or `generic_nack`. */
      isResponse(): boolean;
      /** The response to this request, with the same sequence number. */
      response(options?: Record<string, unknown>): PDU;
    }

    /** Builds a PDU; string messages are encoded by the library unless given as Buffers. */
    interface PDUConstructor {
      new (command: string, options?: Record<string, unknown>): PDU;
    }

    /** One SMPP connection, client or server side; emits each received PDU by command. */
    interface Session extends EventEmitter {
      socket: Socket;
      /** Sends; returns false (and never calls back) when the socket is not writable. */
      send(pdu: PDU, onResponse?: (response: PDU) => void, onSent?: (pdu: PDU) => void): boolean;
      close(callback?: () => void): void;
      destroy(callback?: () => void): void;
      pause(): void;
      resume(): void;
    }

    /** A `net.Server` that wraps each connection in a {@link Session}. */
    interface Server extends NetServer {
      sessions: Session[];
    }

    /** Where a client session connects. */
    interface ConnectOptions {
      host: string;
      port: number;
      tls?: boolean;
      auto_enquire_link_period?: number;
    }

    /** One of the library's text codecs. */
    interface Codec {
      match(value: string): boolean;
      encode(value: string): Buffer;
      decode(value: Buffer): string;
    }
  }

  const smpp: {
    PDU: smpp.PDUConstructor;
    connect(options: smpp.ConnectOptions): smpp.Session;
    createServer(listener: (session: smpp.Session) => void): smpp.Server;
    /** Command status names (`ESME_R...`) to their codes. */
    errors: Readonly<Record<string, number>>;
    /** `ASCII` is the GSM 03.38 default alphabet, one septet per octet (unpacked). */
    encodings: { ASCII: smpp.Codec; LATIN1: smpp.Codec; UCS2: smpp.Codec };
  };

  export = smpp;
}
