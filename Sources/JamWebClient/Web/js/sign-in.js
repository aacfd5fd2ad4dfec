// Who this browser is to the server: a guest token, made on first use and kept
// (identity.js), signed in again once when the server no longer takes the stored one.
import { forgetIdentity, loadIdentity, saveIdentity } from './identity.js';
import { ErrorCode } from './protocol.js';

export class SignIn {
  /** @param {import('./api.js').Api} api gets the token for its calls */
  constructor(api) {
    this.api = api;
    /** @type {{token: string, userId: string, displayName: string}|null} */
    this.identity = loadIdentity();
    if (this.identity) this.api.token = this.identity.token;
  }

  /** A token for `displayName`: the stored one when there is one (the name goes with each join). */
  async ensureSignedIn(displayName, fresh = false) {
    if (this.identity && !fresh) return this.identity;
    const answer = await this.api.guest(displayName);
    this.identity = { token: answer.token, userId: answer.userId, displayName: answer.displayName };
    this.api.token = answer.token;
    saveIdentity(this.identity);
    return this.identity;
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
      this.identity = { ...this.identity, displayName };
      saveIdentity(this.identity);
    }
  }
}
