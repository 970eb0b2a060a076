/**
 * The stop and start keywords: a subscriber's MO message whose whole text is one opts its
 * sender out of the short code it was sent to, or back in.
 */

/** What a keyword does: `stop` opts out, `start` back in. */
export type Keyword = 'stop' | 'start';

/** A keyword as compared: upper case, inner runs of space as one, no surrounding space. */
export function keywordForm(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toUpperCase();
}

/** Returns the function that tells which keyword a text is, for these stop and start keywords. */
export function keywordMatcher(stop: readonly string[], start: readonly string[]): (text: string) => Keyword | null {
  const stops = new Set(stop.map(keywordForm));
  const starts = new Set(start.map(keywordForm));
  return (text) => {
    // A keyword is short: a long text is a message, never a keyword, however it ends.
    if (text.length > 64) return null;
    const form = keywordForm(text);
    return stops.has(form) ? 'stop' : starts.has(form) ? 'start' : null;
  };
}
