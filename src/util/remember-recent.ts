/**
 * `rememberRecent`: a derivation remembered for the keys seen lately. For per-request work on
 * a few recurring keys (client addresses, callback URLs) where a flood of distinct keys must
 * not grow memory without end.
 */

/**
 * Returns `compute` remembering its results for up to `kept` keys; past that it forgets them
 * all and starts over (cheaper than tracking recency, and a flood is the only way to get
 * there). `compute` must be pure and never return `undefined`.
 */
export function rememberRecent<K, V>(compute: (key: K) => V, kept: number): (key: K) => V {
  const known = new Map<K, V>();
  return (key) => {
    let value = known.get(key);
    if (value === undefined) {
      value = compute(key);
      if (known.size >= kept) known.clear();
      known.set(key, value);
    }
    return value;
  };
}
