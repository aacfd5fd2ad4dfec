// What the browser remembers between visits: the guest token (and when to refresh it), the
// name, and the last session, so a reload or a dropped tab returns to the session.
import { readStored, writeStored } from './storage.js';

const IDENTITY_KEY = 'openjam.identity';
const SESSION_KEY = 'openjam.session';

/** @returns {{token: string, userId: string, displayName: string}|null} */
export function loadIdentity() {
  const value = readStored(IDENTITY_KEY);
  return value && value.token && value.userId ? value : null;
}

export function saveIdentity(identity) {
  writeStored(IDENTITY_KEY, identity);
}

export function forgetIdentity() {
  writeStored(IDENTITY_KEY, null);
}

/** @returns {{id: string, joinCode: string}|null} */
export function loadLastSession() {
  const value = readStored(SESSION_KEY);
  return value && value.id ? value : null;
}

export function saveLastSession(session) {
  writeStored(SESSION_KEY, session ? { id: session.id, joinCode: session.joinCode } : null);
}

export function rememberedName() {
  const identity = readStored(IDENTITY_KEY);
  return identity && identity.displayName ? identity.displayName : '';
}
