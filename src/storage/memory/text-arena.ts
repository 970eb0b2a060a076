/**
 * Texts kept outside the JS heap, each under a number and a time, for the records a memory
 * storage keeps by the hundred thousand and reads back rarely (the idempotency records).
 *
 * A text in the heap is an object the garbage collector copies while it is young and marks
 * on every full collection for as long as it is kept; a day of kept answers is most of what
 * an `Idempotency-Key` costs a busy memory storage. Here the texts are written into large
 * Buffers (chunks), whose bytes the collector never walks, and a text is found again by its
 * number: its chunk and its slot there. A chunk is freed once every text in it is deleted;
 * texts are kept in the order they are added, which for records that expire after one
 * lifetime is the order they go, so a chunk empties whole.
 *
 * @module
 */

/** Bytes per UTF-16 code unit: texts are kept as UTF-16 so that any string, a lone surrogate included, comes back exactly. */
const UNIT = 2;

/** One Buffer of texts, with where each ends and the time kept with it. */
class Chunk {
  readonly bytes: Buffer;
  /** Each slot's end offset in `bytes`; a slot starts where the one before it ends. */
  readonly ends: Int32Array;
  /** The time kept with each slot's text. */
  readonly times: Float64Array;
  /** Slots used so far. */
  used = 0;
  /** Slots whose text is not deleted. */
  live = 0;

  constructor(slots: number, size: number) {
    // Not from Buffer's shared pool: a chunk lives for as long as its texts.
    this.bytes = Buffer.allocUnsafeSlow(size);
    this.ends = new Int32Array(slots);
    this.times = new Float64Array(slots);
  }

  /** Whether `text` fits in a free slot. */
  fits(text: string): boolean {
    return this.used < this.ends.length && this.start(this.used) + text.length * UNIT <= this.bytes.length;
  }

  /** Where `slot`'s text starts in `bytes` (for the next free slot: where the texts end). */
  start(slot: number): number {
    return slot === 0 ? 0 : this.ends[slot - 1]!;
  }
}

/** Texts outside the JS heap, by number (see the module's TSDoc). */
export class TextArena {
  /** The chunks by index; a freed one is `undefined` (the numbers of later ones stay as they are). */
  readonly #chunks: (Chunk | undefined)[] = [];

  /**
   * @param slots Texts per chunk: the number of a text is `chunk * slots + slot`.
   * @param chunkBytes A chunk's size, unless one text needs more.
   */
  constructor(
    private readonly slots = 4096,
    private readonly chunkBytes = 1 << 20,
  ) {}

  /** Keeps `text` with `time`; returns its number. */
  add(text: string, time: number): number {
    let index = this.#chunks.length - 1;
    let chunk = this.#chunks[index];
    if (chunk === undefined || !chunk.fits(text)) {
      // A full chunk whose texts were all deleted while it was the last one goes now.
      if (chunk !== undefined && chunk.live === 0) this.#chunks[index] = undefined;
      chunk = new Chunk(this.slots, Math.max(this.chunkBytes, text.length * UNIT));
      index = this.#chunks.push(chunk) - 1;
    }
    const slot = chunk.used++;
    const start = chunk.start(slot);
    chunk.ends[slot] = start + chunk.bytes.write(text, start, 'utf16le');
    chunk.times[slot] = time;
    chunk.live++;
    return index * this.slots + slot;
  }

  /** The text kept under `id`. */
  text(id: number): string {
    const chunk = this.#chunk(id);
    const slot = id % this.slots;
    return chunk.bytes.toString('utf16le', chunk.start(slot), chunk.ends[slot]);
  }

  /** The time kept with the text under `id`. */
  time(id: number): number {
    return this.#chunk(id).times[id % this.slots]!;
  }

  /** Forgets the text under `id`; its chunk is freed when it was the chunk's last and no text will be added to it. */
  delete(id: number): void {
    const index = Math.floor(id / this.slots);
    const chunk = this.#chunk(id);
    chunk.live--;
    if (chunk.live === 0 && index < this.#chunks.length - 1) this.#chunks[index] = undefined;
  }

  #chunk(id: number): Chunk {
    const chunk = this.#chunks[Math.floor(id / this.slots)];
    if (chunk === undefined) throw new Error(`TextArena: no text ${id}`);
    return chunk;
  }
}
