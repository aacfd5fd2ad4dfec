// What the browser keeps between visits, as JSON in localStorage. Storage can be
// unavailable (private modes, blocked cookies): then values live in memory for this
// page only.
const memory = new Map();

/** The value stored under key, or null. */
export function readStored(key) {
  try {
    const text = localStorage.getItem(key);
    return text ? JSON.parse(text) : null;
  } catch {
    return memory.get(key) ?? null;
  }
}

/** Stores value under key; null removes it. */
export function writeStored(key, value) {
  try {
    if (value == null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch {
    if (value == null) memory.delete(key);
    else memory.set(key, value);
  }
}
