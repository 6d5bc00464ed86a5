/** Deterministic randomness: a seeded PRNG per row and the ways the generator draws with it. */

export type Rng = () => number;

/** A small, fast PRNG (mulberry32) whose state is mixed from the seed and the row's index. */
export function rngFor(seed: number, index: number): Rng {
  let s = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 0x27d4eb2f, 0xc2b2ae35)) >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws an index from 0..n-1 with weight 1/(k+1)^s. */
export function zipf(n: number, s: number): (r: number) => number {
  const cumulative: number[] = [];
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** s;
    cumulative.push(total);
  }
  return (r) => {
    const target = r * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** One item of `list`, uniformly. */
export function pick<T>(rng: Rng, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)]!;
}

/**
 * Weights of each value of one of the service's enumerations: keyed by its type, so a value added
 * to the enumeration is a type error where its weights are written until it has a weight.
 */
export type Weights<T extends string> = Readonly<Record<T, number>>;

/** One value of an enumeration, by its weights (in the order they are written). */
export function weightedOf<T extends string>(rng: Rng, weights: Weights<T>): T {
  return weighted(rng, Object.entries(weights) as [T, number][]);
}
/** One value of `table`, with probability proportional to its weight. */
export function weighted<T extends string>(rng: Rng, table: readonly (readonly [T, number])[]): T {
  let r = rng() * table.reduce((sum, [, w]) => sum + w, 0);
  for (const [value, w] of table) {
    r -= w;
    if (r < 0) return value;
  }
  return table[table.length - 1]![0];
}
/** Up to `n` distinct items drawn by `draw`. */
export function distinct<T>(n: number, draw: () => T): T[] {
  const out = new Set<T>();
  for (let tries = 0; out.size < n && tries < n * 8; tries++) out.add(draw());
  return [...out];
}
