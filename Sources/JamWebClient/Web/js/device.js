// This browser's stable device id: the server keeps a delay per member and device, so
// the id must outlive reloads and reconnects (kept in localStorage with the identity).
import { isDeviceId } from './protocol.js';
import { readStored, writeStored } from './storage.js';

const DEVICE_KEY = 'openjam.device';

/** The id, made once: 16 letters and digits, as `Validate.deviceId` accepts (isDeviceId). */
export function deviceId() {
  const stored = readStored(DEVICE_KEY);
  if (isDeviceId(stored)) return stored;
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  const id = Array.from(bytes, (b) => (b % 36).toString(36)).join('').padEnd(16, '0').slice(0, 16);
  writeStored(DEVICE_KEY, id);
  return id;
}
