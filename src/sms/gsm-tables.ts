/**
 * The GSM 7-bit default alphabet of 3GPP TS 23.038 (formerly GSM 03.38), section 6.2.1:
 * the basic table and its extension table, as the UTF-16 characters they stand for.
 *
 * Written as `\u` escapes so the source stays ASCII and every entry can be checked against
 * the standard's table by its code point. `GSM_COST` is built once at load time.
 */

/**
 * The 127 characters of the basic table, in table order (0x00 to 0x7F), without 0x1B,
 * which is the escape to the extension table rather than a character. Each costs one septet.
 */
export const GSM_BASIC_CHARS =
  // 0x00-0x0F: @ pound $ yen e-grave e-acute u-grave i-grave o-grave C-cedilla LF O-slash o-slash CR A-ring a-ring
  '\u0040\u00A3\u0024\u00A5\u00E8\u00E9\u00F9\u00EC\u00F2\u00C7\u000A\u00D8\u00F8\u000D\u00C5\u00E5' +
  // 0x10-0x1F: Delta _ Phi Gamma Lambda Omega Pi Psi Sigma Theta Xi (0x1B ESC) AE ae sharp-s E-acute
  '\u0394\u005F\u03A6\u0393\u039B\u03A9\u03A0\u03A8\u03A3\u0398\u039E\u00C6\u00E6\u00DF\u00C9' +
  // 0x20-0x2F: space ! " # currency-sign % & ' ( ) * + , - . /
  '\u0020\u0021\u0022\u0023\u00A4\u0025\u0026\u0027\u0028\u0029\u002A\u002B\u002C\u002D\u002E\u002F' +
  // 0x30-0x3F: 0-9 : ; < = > ?
  '\u0030\u0031\u0032\u0033\u0034\u0035\u0036\u0037\u0038\u0039\u003A\u003B\u003C\u003D\u003E\u003F' +
  // 0x40-0x4F: inverted-! A-O
  '\u00A1\u0041\u0042\u0043\u0044\u0045\u0046\u0047\u0048\u0049\u004A\u004B\u004C\u004D\u004E\u004F' +
  // 0x50-0x5F: P-Z A-diaeresis O-diaeresis N-tilde U-diaeresis section-sign
  '\u0050\u0051\u0052\u0053\u0054\u0055\u0056\u0057\u0058\u0059\u005A\u00C4\u00D6\u00D1\u00DC\u00A7' +
  // 0x60-0x6F: inverted-? a-o
  '\u00BF\u0061\u0062\u0063\u0064\u0065\u0066\u0067\u0068\u0069\u006A\u006B\u006C\u006D\u006E\u006F' +
  // 0x70-0x7F: p-z a-diaeresis o-diaeresis n-tilde u-diaeresis a-grave
  '\u0070\u0071\u0072\u0073\u0074\u0075\u0076\u0077\u0078\u0079\u007A\u00E4\u00F6\u00F1\u00FC\u00E0';

/**
 * The characters of the extension table (reached by 0x1B ESC), each costing two septets:
 * form feed ^ { } \ [ ~ ] | and the euro sign. The national single-shift tables are not
 * used: a sender cannot rely on a handset supporting them.
 */
export const GSM_EXTENSION_CHARS = '\u000C\u005E\u007B\u007D\u005C\u005B\u007E\u005D\u007C\u20AC';

/**
 * Septet cost of each UTF-16 code unit: 0 = not in the GSM alphabet (the text must go
 * UCS-2), 1 = basic table, 2 = extension table. Indexed by `charCodeAt`, so it covers all
 * 65536 code units and needs no bounds check; surrogates are 0.
 */
export const GSM_COST: Uint8Array = (() => {
  const table = new Uint8Array(0x10000);
  for (let i = 0; i < GSM_BASIC_CHARS.length; i++) table[GSM_BASIC_CHARS.charCodeAt(i)] = 1;
  for (let i = 0; i < GSM_EXTENSION_CHARS.length; i++) table[GSM_EXTENSION_CHARS.charCodeAt(i)] = 2;
  return table;
})();

/** The extension table's codes (after 0x1B ESC), in the order of {@link GSM_EXTENSION_CHARS}. */
const GSM_EXTENSION_CODES = [0x0a, 0x14, 0x28, 0x29, 0x2f, 0x3c, 0x3d, 0x3e, 0x40, 0x65];

/**
 * Septets of each UTF-16 code unit: the basic-table code, or 0x1B00 | code for the
 * extension table, or 0xFFFF when it is not in the alphabet.
 */
const GSM_SEPTETS: Uint16Array = (() => {
  const table = new Uint16Array(0x10000).fill(0xffff);
  // The basic string skips 0x1B (the escape), so codes from there on are one higher.
  for (let i = 0; i < GSM_BASIC_CHARS.length; i++) table[GSM_BASIC_CHARS.charCodeAt(i)] = i < 0x1b ? i : i + 1;
  for (let i = 0; i < GSM_EXTENSION_CHARS.length; i++) table[GSM_EXTENSION_CHARS.charCodeAt(i)] = 0x1b00 | GSM_EXTENSION_CODES[i]!;
  return table;
})();

/**
 * `text` in the GSM 7-bit default alphabet, one septet per octet (unpacked, as SMPP's
 * data_coding 0 carries it), extension characters as 0x1B and their code. A character
 * outside the alphabet becomes a space, as the `smpp` library's encoder does; callers send
 * such texts as UCS-2, so it does not happen for them.
 *
 * Written here rather than taken from the `smpp` library: its encoder rebuilds a key list
 * of the whole table and a regular expression for every part it encodes.
 */
export function encodeGsm7(text: string): Buffer {
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const septets = GSM_SEPTETS[text.charCodeAt(i)]!;
    if (septets > 0xff && septets !== 0xffff) length++;
  }
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const septets = GSM_SEPTETS[text.charCodeAt(i)]!;
    if (septets === 0xffff) out[at++] = 0x20;
    else if (septets > 0xff) {
      out[at++] = 0x1b;
      out[at++] = septets & 0xff;
    } else out[at++] = septets;
  }
  return out;
}
