// Random identifiers for nonces and command ids. crypto.randomUUID exists only in
// secure contexts, and a self-hosted server is often reached over plain http on a
// LAN address, so this builds a v4 UUID from getRandomValues, which works everywhere.

/** A lowercase random (v4) UUID. */
export function randomUUID() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A uniform random number in [0, 1) from the crypto source (jitter need not be predictable). */
export function randomFraction() {
  const word = new Uint32Array(1);
  crypto.getRandomValues(word);
  return word[0] / 2 ** 32;
}
