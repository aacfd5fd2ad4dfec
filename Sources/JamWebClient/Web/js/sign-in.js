// Who this browser is to the server: a guest token, made on first use and kept
// (identity.js), refreshed once half its life is gone so a member who keeps coming back
// stays the same member, and signed in again once when the server no longer takes it.
import { forgetIdentity, loadIdentity, saveIdentity } from './identity.js';
import { ErrorCode } from './protocol.js';

/** setTimeout's longest delay (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** After a refresh that could not reach the server: the first wait, doubled up to the longest. */
const RETRY_FIRST_MS = 30_000;
const RETRY_LONGEST_MS = 30 * 60_000;

export class SignIn {
  /** @param {import('./api.js').Api} api gets the token for its calls */
  constructor(api, now = () => Date.now()) {
    this.api = api;
    this.now = now;
    /** @type {{token: string, userId: string, displayName: string, refreshAt?: number}|null} */
    this.identity = loadIdentity();
    if (this.identity) this.api.token = this.identity.token;
    this.refreshTimer = null;
    /** Refreshes in a row that could not reach the server. */
    this.refreshFailures = 0;
  }

  /** A token for `displayName`: the stored one when there is one (the name goes with each join). */
  async ensureSignedIn(displayName, fresh = false) {
    if (this.identity && !fresh) return this.identity;
    const answer = await this.api.guest(displayName);
    this.identity = { token: answer.token, userId: answer.userId, displayName: answer.displayName };
    this.took(answer);
    return this.identity;
  }

  /**
   * Swaps the stored token for a fresh one once half its life is gone (or when the stored
   * one predates expiry times), then again at the next half-life while the page is open.
   * A refused token is forgotten; an unreachable server is tried again with a growing wait
   * (30 s, doubling to 30 min), so a page left open past the token's end keeps its member.
   */
  async refreshIfDue() {
    if (!this.identity) return;
    if (this.identity.refreshAt && this.now() < this.identity.refreshAt) {
      this.scheduleRefresh();
      return;
    }
    try {
      this.took(await this.api.refresh());
      this.refreshFailures = 0;
    } catch (error) {
      if (error.code !== ErrorCode.unauthorized) {
        const wait = Math.min(RETRY_LONGEST_MS, RETRY_FIRST_MS * 2 ** this.refreshFailures);
        this.refreshFailures += 1;
        clearTimeout(this.refreshTimer);
        this.refreshTimer = setTimeout(() => this.refreshIfDue(), wait);
        return;
      }
      forgetIdentity();
      this.identity = null;
      this.api.token = null;
    }
  }

  /** Keeps `answer`'s token in the same identity object, so open sockets reconnect with it. */
  took(answer) {
    const now = this.now();
    this.identity.token = answer.token;
    this.identity.refreshAt = now + Math.max(0, (answer.expiresAt - now) / 2);
    this.api.token = answer.token;
    saveIdentity(this.identity);
    this.scheduleRefresh();
  }

  scheduleRefresh() {
    clearTimeout(this.refreshTimer);
    if (!this.identity || !this.identity.refreshAt) return;
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, this.identity.refreshAt - this.now()));
    this.refreshTimer = setTimeout(() => this.refreshIfDue(), wait);
  }

  /** Runs a REST call that needs a token, signing in again once if the stored token is refused. */
  async withSignIn(displayName, call) {
    await this.ensureSignedIn(displayName);
    try {
      return await call();
    } catch (error) {
      if (error.code !== ErrorCode.unauthorized) throw error;
      forgetIdentity();
      this.identity = null;
      await this.ensureSignedIn(displayName, true);
      return call();
    }
  }

  rememberName(displayName) {
    if (this.identity && this.identity.displayName !== displayName) {
      this.identity.displayName = displayName;
      saveIdentity(this.identity);
    }
  }
}
