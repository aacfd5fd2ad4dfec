// An in-place radix-2 FFT over separate real and imaginary arrays: what the calibration
// detector needs to correlate a second of audio with its probe in milliseconds.

/** The smallest power of two at least `n`. */
export function nextPowerOfTwo(n) {
  let size = 1;
  while (size < n) size *= 2;
  return size;
}

/**
 * Transforms (`re`, `im`) in place; their length must be a power of two. The inverse
 * (`inverse` true) is scaled by 1/n, so a forward and an inverse give the input back.
 */
export function fft(re, im, inverse) {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let length = 2; length <= n; length <<= 1) {
    const angle = ((inverse ? 2 : -2) * Math.PI) / length;
    const stepRe = Math.cos(angle), stepIm = Math.sin(angle);
    const halfLength = length >> 1;
    for (let start = 0; start < n; start += length) {
      let wRe = 1, wIm = 0;
      for (let k = 0; k < halfLength; k++) {
        const a = start + k, b = a + halfLength;
        const tRe = re[b] * wRe - im[b] * wIm;
        const tIm = re[b] * wIm + im[b] * wRe;
        re[b] = re[a] - tRe;
        im[b] = im[a] - tIm;
        re[a] += tRe;
        im[a] += tIm;
        const nextRe = wRe * stepRe - wIm * stepIm;
        wIm = wRe * stepIm + wIm * stepRe;
        wRe = nextRe;
      }
    }
  }
  if (inverse) {
    for (let i = 0; i < n; i++) {
      re[i] /= n;
      im[i] /= n;
    }
  }
}
