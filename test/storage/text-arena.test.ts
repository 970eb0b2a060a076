import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TextArena } from '../../src/storage/memory/text-arena.js';

describe('TextArena', () => {
  it('gives back every text and time exactly as added, lone surrogates and empty texts included', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ unit: 'binary' }), fc.double({ noNaN: true })), { maxLength: 200 }), (entries) => {
        const arena = new TextArena();
        const ids = entries.map(([text, time]) => arena.add(text, time));
        entries.forEach(([text, time], i) => {
          expect(arena.text(ids[i]!)).toBe(text);
          expect(arena.time(ids[i]!)).toBe(time);
        });
      }),
    );
  });

  it('keeps texts across many chunks, one larger than a chunk among them', () => {
    const arena = new TextArena(8, 64);
    const texts = Array.from({ length: 100 }, (_, i) => (i === 50 ? 'é'.repeat(100) : `record ${i} \u{1F600}`));
    const ids = texts.map((text, i) => arena.add(text, i));
    expect(new Set(ids).size).toBe(texts.length);
    texts.forEach((text, i) => {
      expect(arena.text(ids[i]!)).toBe(text);
      expect(arena.time(ids[i]!)).toBe(i);
    });
  });

  it('lets a chunk go once every text in it is deleted, and keeps the texts of the others', () => {
    const arena = new TextArena(4, 1024);
    const ids = Array.from({ length: 10 }, (_, i) => arena.add(`text ${i}`, i));
    for (const id of ids.slice(0, 3)) arena.delete(id);
    expect(arena.text(ids[3]!)).toBe('text 3');
    arena.delete(ids[3]!);
    expect(() => arena.text(ids[0]!)).toThrow(/no text/);
    ids.slice(4).forEach((id, i) => expect(arena.text(id)).toBe(`text ${i + 4}`));
  });

  it('keeps the chunk texts are still added to, though every text in it so far is deleted', () => {
    const arena = new TextArena(4, 1024);
    arena.delete(arena.add('one', 1));
    const second = arena.add('two', 2);
    expect(arena.text(second)).toBe('two');
  });

  it('lets a full chunk go whose texts were all deleted while it was the last', () => {
    const arena = new TextArena(2, 1024);
    const ids = [arena.add('a', 1), arena.add('b', 2)];
    ids.forEach((id) => arena.delete(id));
    const next = arena.add('c', 3);
    expect(() => arena.text(ids[0]!)).toThrow(/no text/);
    expect(arena.text(next)).toBe('c');
  });
});
