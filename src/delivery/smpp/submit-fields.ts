/**
 * The `submit_sm` fields of one part: its body encoded for its data_coding, the
 * concatenation header (a UDH or SAR TLVs) of a multipart message, and the TON/NPI of
 * each address. Kept apart from the bind so that what goes on the wire for a part can be
 * read, and changed, without the connection logic around it.
 */
import { DeliveryError, type OutgoingPart } from '../contract.js';
import { encodeGsm7 } from '../../sms/gsm-tables.js';
import { outcome } from '../../lifecycle/states.js';
import type { SmppConfig } from './options.js';

/** esm_class bit saying `short_message` starts with a user data header. */
const ESM_UDHI = 0x40;

/** The most octets `short_message` holds; longer bodies go in `message_payload`. */
const SHORT_MESSAGE_MAX = 254;
/** Longest alphanumeric sender id a handset displays. */
const ALPHANUMERIC_SENDER_MAX = 11;

/**
 * The `submit_sm` fields for one part, by the address and encoding rules documented on
 * `SmppDelivery`; throws a permanent `DeliveryError` (`invalid_source_address`) for a
 * sender that is no address SMPP can carry.
 */
export function buildSubmitFields(part: OutgoingPart, config: SmppConfig): Record<string, unknown> {
  const source = sourceAddress(part.sender, config);
  const body =
    part.encoding === 'UCS-2'
      ? Buffer.from(part.partText, 'utf16le').swap16()
      : encodeGsm7(part.partText);
  const multipart = part.count > 1;
  let esmClass = 0;
  let message = body;
  const fields: Record<string, unknown> = {};
  if (multipart && config.concatenation === 'udh') {
    const udh = Buffer.from([0x05, 0x00, 0x03, part.concatRef & 0xff, part.count & 0xff, (part.index + 1) & 0xff]);
    message = Buffer.concat([udh, body]);
    esmClass |= ESM_UDHI;
  } else if (multipart) {
    fields.sar_msg_ref_num = part.concatRef & 0xffff;
    fields.sar_total_segments = part.count & 0xff;
    fields.sar_segment_seqnum = (part.index + 1) & 0xff;
  }
  if (part.validitySeconds !== undefined) fields.validity_period = relativeTime(part.validitySeconds);
  if (message.length > SHORT_MESSAGE_MAX) {
    fields.message_payload = message;
    message = Buffer.alloc(0);
  }
  return {
    ...fields,
    service_type: config.serviceType,
    source_addr_ton: source.ton,
    source_addr_npi: source.npi,
    source_addr: source.addr,
    dest_addr_ton: 1,
    dest_addr_npi: 1,
    destination_addr: part.recipient.replace(/^\+/, ''),
    esm_class: esmClass,
    registered_delivery: 1,
    data_coding: part.encoding === 'UCS-2' ? 0x08 : 0x00,
    short_message: message,
  };
}

/**
 * `seconds` as an SMPP relative time (`YYMMDDhhmmss000R`, SMPP 3.4 section 7.1.1.2): days,
 * hours, minutes and seconds from now, years and months 0, at most 99 days.
 */
export function relativeTime(seconds: number): string {
  let left = Math.min(Math.max(1, Math.ceil(seconds)), 99 * 86_400 + 86_399);
  const fields = [86_400, 3_600, 60, 1].map((unit) => {
    const n = Math.floor(left / unit);
    left -= n * unit;
    return String(n).padStart(2, '0');
  });
  return `0000${fields.join('')}000R`;
}

function sourceAddress(sender: string, config: SmppConfig): { ton: number; npi: number; addr: string } {
  const digits = sender.replace(/^\+/, '');
  if (/^\d+$/.test(digits)) {
    return digits.length <= 8
      ? { ton: config.shortCodeTon, npi: config.shortCodeNpi, addr: digits }
      : { ton: 1, npi: 1, addr: digits };
  }
  if (sender.length === 0 || sender.length > ALPHANUMERIC_SENDER_MAX || !/^[\x20-\x7e]+$/.test(sender)) {
    throw new DeliveryError(`SMPP sender "${sender}" is not a short code, number, or 1-11 ASCII characters`, {
      permanent: true,
      outcome: outcome('rejected', 'invalid_source_address'),
    });
  }
  return { ton: 5, npi: 0, addr: sender };
}
