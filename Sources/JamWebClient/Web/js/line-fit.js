// The lines offset(t) = a + k·(t − r) that pass below every sample's upper
// constraint (t1 − t0 at t0) and above every lower one (t2 − t3 at t3): a port of
// JamClient's LineFit, so the browser's clock estimate and its bound mean exactly
// what the Swift client's do. Times are relative to the reference r, values to `base`
// (keeps the arithmetic near zero where doubles are exact enough).

const ITERATIONS = 40;
const GOLDEN = (Math.sqrt(5) - 1) / 2;

export class LineFit {
  /**
   * @param {{t0:number,t1:number,t2:number,t3:number}[]} samples
   * @param {number} r the reference instant (local ms)
   * @param {number} [base] subtracted from every value
   */
  constructor(samples, r, base) {
    this.base = base ?? (samples.length ? samples[0].t1 - samples[0].t0 : 0);
    // Only the points on a hull can be the min (upper) or max (lower) for some slope: the
    // searches then cost a few dozen points, not the window's thousand samples.
    const upper = LineFit.hull(samples.map((s) => ({ t: s.t0, v: s.t1 - s.t0 })), true);
    const lower = LineFit.hull(samples.map((s) => ({ t: s.t3, v: s.t2 - s.t3 })), false);
    this.upperT = upper.map((p) => p.t - r);
    this.upperV = upper.map((p) => p.v - this.base);
    this.lowerT = lower.map((p) => p.t - r);
    this.lowerV = lower.map((p) => p.v - this.base);
  }

  /**
   * The lower (`below`) or upper convex hull of points {t, v} by Andrew's monotone chain,
   * sorted by t: the points that attain the min (or max) of v − k·t for some k (LineFit.hull).
   */
  static hull(points, below) {
    let inOrder = true;
    for (let i = 1; i < points.length && inOrder; i++) inOrder = points[i - 1].t <= points[i].t;
    const sorted = inOrder ? points : [...points].sort((a, b) => a.t - b.t);
    const chain = [];
    for (const p of sorted) {
      const last = chain[chain.length - 1];
      if (last && last.t === p.t) {
        // One point per instant: the lower (or higher) of the two.
        if (below ? p.v >= last.v : p.v <= last.v) continue;
        chain.pop();
      }
      // Pop the last point while it does not bend the chain the hull's way.
      while (chain.length >= 2) {
        const a = chain[chain.length - 2];
        const b = chain[chain.length - 1];
        const cross = (b.t - a.t) * (p.v - a.v) - (b.v - a.v) * (p.t - a.t);
        if (below ? cross > 0 : cross < 0) break;
        chain.pop();
      }
      chain.push(p);
    }
    return chain;
  }

  static envelopeMin(t, v, k) {
    let value = Infinity;
    for (let i = 0; i < t.length; i++) {
      const candidate = v[i] - k * t[i];
      if (candidate < value) value = candidate;
    }
    return value;
  }

  static envelopeMax(t, v, k) {
    let value = -Infinity;
    for (let i = 0; i < t.length; i++) {
      const candidate = v[i] - k * t[i];
      if (candidate > value) value = candidate;
    }
    return value;
  }

  /** The highest offset at r a line of slope k may have (concave in k). */
  upper(k) {
    return LineFit.envelopeMin(this.upperT, this.upperV, k);
  }

  /** The lowest offset at r a line of slope k may have (convex in k). */
  lower(k) {
    return LineFit.envelopeMax(this.lowerT, this.lowerV, k);
  }

  /**
   * The slopes some line satisfying every constraint (within slack) may have, [low, high],
   * and the widest: the drift as the one slope both delay floors share, where the upper and
   * lower constraints leave the most room between them (LineFit.slopes in JamClient).
   * Null when no line fits.
   */
  slopes(searchRange, slack) {
    if (!this.upperT.length) return null;
    const room = (k) => this.upper(k) - this.lower(k);
    const best = LineFit.argmax(room, -searchRange, searchRange);
    if (room(best) < -slack) return null;
    const ok = (k) => room(k) >= -slack;
    const low = ok(-searchRange) ? -searchRange : LineFit.boundary(best, -searchRange, ok);
    const high = ok(searchRange) ? searchRange : LineFit.boundary(best, searchRange, ok);
    return { feasible: [low, high], widest: best };
  }

  /** The lowest and highest offset at r of any line with a slope in [lo, hi]. */
  offsetRange(lo, hi) {
    const highest = this.upper(LineFit.argmax((k) => this.upper(k), lo, hi));
    const lowest = this.lower(LineFit.argmax((k) => -this.lower(k), lo, hi));
    return [lowest, highest];
  }

  /** Golden-section search for the maximum of a concave function on [lo, hi]. */
  static argmax(f, lo, hi) {
    let a = lo;
    let b = hi;
    if (!(b > a)) return a;
    let c = b - GOLDEN * (b - a);
    let d = a + GOLDEN * (b - a);
    let fc = f(c);
    let fd = f(d);
    for (let i = 0; i < ITERATIONS; i++) {
      if (fc >= fd) {
        b = d;
        d = c;
        fd = fc;
        c = b - GOLDEN * (b - a);
        fc = f(c);
      } else {
        a = c;
        c = d;
        fc = fd;
        d = a + GOLDEN * (b - a);
        fd = f(d);
      }
    }
    let best = lo;
    for (const x of [hi, (a + b) / 2]) if (f(x) > f(best)) best = x;
    return best;
  }

  /** Bisection for the edge between a feasible and an infeasible point. */
  static boundary(inside, outside, feasible) {
    let good = inside;
    let bad = outside;
    for (let i = 0; i < ITERATIONS; i++) {
      const mid = (good + bad) / 2;
      if (feasible(mid)) good = mid;
      else bad = mid;
    }
    return good;
  }
}
