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
    this.upperT = [];
    this.upperV = [];
    this.lowerT = [];
    this.lowerV = [];
    for (const s of samples) {
      this.upperT.push(s.t0 - r);
      this.upperV.push(s.t1 - s.t0 - this.base);
      this.lowerT.push(s.t3 - r);
      this.lowerV.push(s.t2 - s.t3 - this.base);
    }
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
