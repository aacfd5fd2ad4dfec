// Numbers and times as people read them.

/** 83_000 -> "1:23". */
export function formatTime(ms) {
  if (ms == null || !Number.isFinite(ms)) return '–:––';
  const total = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(total / 60);
  const seconds = String(total % 60).padStart(2, '0');
  if (minutes >= 60) return `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}:${seconds}`;
  return `${minutes}:${seconds}`;
}

/** A signed number with a fixed number of decimals: "+1.25", "−0.40". */
export function signed(value, digits = 1) {
  if (value == null || !Number.isFinite(value)) return '–';
  const text = Math.abs(value).toFixed(digits);
  if (Number(text) === 0) return `±${text}`;
  return `${value < 0 ? '−' : '+'}${text}`;
}

export function fixed(value, digits = 1) {
  if (value == null || !Number.isFinite(value)) return '–';
  return value.toFixed(digits);
}

/** "1 vote", "3 votes". */
export function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

/** Initials for a cover placeholder: "Morning Light" -> "ML". */
export function initials(text) {
  const words = String(text || '').trim().split(/\s+/).filter(Boolean);
  return (words.slice(0, 2).map((w) => w[0]).join('') || '♪').toUpperCase();
}
