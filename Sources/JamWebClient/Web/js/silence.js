// A tenth of a second of silence, for unlocking audio elements inside a click.
let silence = null;

/** A tenth of a second of silence as a WAV blob (the CSP allows blob: media, not data:). */
export function silenceURL() {
  if (silence) return silence;
  const rate = 48_000;
  const frames = rate / 10;
  const bytes = new Uint8Array(44 + frames * 2);
  const view = new DataView(bytes.buffer);
  const ascii = (offset, text) => [...text].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + frames * 2, true);
  ascii(8, 'WAVEfmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, frames * 2, true); // the samples stay 0: silence
  silence = URL.createObjectURL(new Blob([bytes], { type: 'audio/wav' }));
  return silence;
}
