// The one memoisation helper: a value made once per key object and kept only
// as long as the key lives (a WeakMap), e.g. one client per host's services,
// one session read per request's context.

/** `make(key)` once per key; later calls with the same key answer the first value. */
export function memoize<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const made = new WeakMap<K, V>();
  return (key) => {
    if (made.has(key)) return made.get(key) as V;
    const value = make(key);
    made.set(key, value);
    return value;
  };
}
