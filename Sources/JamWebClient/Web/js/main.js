// The page: signs in as a guest, starts or joins a session (a /j/CODE link joins
// that session), and switches between the welcome, session and "session over"
// screens. The session screen's wiring lives in session-page.js.
import { Api } from './api.js';
import { randomUUID } from './ids.js';
import { loadLastSession, rememberedName, saveLastSession } from './identity.js';
import { ErrorCode, normaliseJoinCode } from './protocol.js';
import { installDebugHook } from './debug.js';
import { SessionPage } from './session-page.js';
import { SignIn } from './sign-in.js';
import { describeError, describeSessionFailure } from './ui/errors.js';
import { byId, h } from './ui/dom.js';
import { HeaderView } from './ui/header.js';
import { Notices } from './ui/notices.js';
import { WelcomeView } from './ui/welcome.js';

/** The join code in a /j/CODE address, or ''. */
function codeFromPath() {
  const match = /^\/j\/([^/]+)\/?$/.exec(location.pathname);
  if (!match) return '';
  try {
    return normaliseJoinCode(decodeURIComponent(match[1]));
  } catch {
    // A garbled link: try it as it is, so the refusal says so in words.
    return normaliseJoinCode(match[1]);
  }
}

/** True when the error means the session is over for this member (left, removed, ended). */
function sessionIsGone(error) {
  return [ErrorCode.notMember, ErrorCode.notFound, ErrorCode.gone].includes(error.code);
}

/** Back to the start address, remembering no session to return to. */
function forgetSession() {
  saveLastSession(null);
  history.replaceState(null, '', '/');
}

class App {
  constructor() {
    this.api = new Api();
    this.signIn = new SignIn(this.api);
    this.notices = new Notices(byId('notices'));
    this.header = new HeaderView({
      onInviteToggle: () => this.session.toggleInvite(),
      onLeave: () => this.leave(),
      onRetry: () => this.session.retryNow(),
    });
    this.welcome = new WelcomeView(byId('welcome'), {
      onCreate: (o) => this.create(o),
      onJoin: (o) => this.join(o),
    });
    this.session = new SessionPage({
      api: this.api,
      header: this.header,
      notices: this.notices,
      onShow: () => this.showScreen('session'),
      onOver: (message, rejoinCode) => this.sessionOver(message, rejoinCode),
      onRenamed: (name) => this.signIn.rememberName(name),
    });
    installDebugHook(this.session);
  }

  async boot() {
    const code = codeFromPath();
    const last = loadLastSession();
    await this.signIn.refreshIfDue();
    const identity = this.signIn.identity;
    if (identity && last && (!code || code === last.joinCode)) {
      try {
        const view = await this.api.getSession(last.id);
        this.enterSession(view);
        return;
      } catch (error) {
        // A session the server could not show just now (restarting, unreachable, busy) opens
        // again on the next visit; any other refusal forgets it.
        const transient = [ErrorCode.unavailable, ErrorCode.internal, ErrorCode.rateLimited].includes(error.code);
        if (!transient) saveLastSession(null);
        if (!code && (sessionIsGone(error) || error.code === ErrorCode.forbidden)) {
          // Said, not dropped: the session ended, or this member was let go or removed, while
          // they were away. No "Join again": the code this device kept may be an old one.
          this.sessionOver(describeSessionFailure(error));
          return;
        }
        if (!code) {
          this.showWelcome({ error: describeError(error, 'resume_session') });
          return;
        }
      }
    }
    if (code && identity && identity.displayName) {
      await this.join({ displayName: identity.displayName, code });
      return;
    }
    this.showWelcome({ code });
  }

  showScreen(name) {
    byId('loading').hidden = true;
    byId('welcome').hidden = name !== 'welcome';
    byId('session').hidden = name !== 'session';
    byId('ended').hidden = name !== 'ended';
    this.header.setInSession(name === 'session');
  }

  showWelcome({ code = '', error = '', fresh = false } = {}) {
    this.showScreen('welcome');
    document.title = 'OpenJam';
    this.welcome.show({ code, name: rememberedName(), error, fresh });
  }

  async create({ displayName, sessionName }) {
    this.welcome.setBusy(true);
    // One key until a create answers: pressing again after a failure on the way (the
    // connection dropped, the server restarted) finds the session the first press made.
    // Changed names are another create: the server refuses a key sent with another body.
    const request = JSON.stringify([displayName, sessionName || '']);
    if (request !== this.createRequest) this.createKey = null;
    this.createRequest = request;
    this.createKey = this.createKey || randomUUID();
    try {
      const view = await this.signIn.withSignIn(displayName, () =>
        this.api.createSession({ name: sessionName || undefined, displayName, key: this.createKey }));
      this.createKey = null;
      this.signIn.rememberName(displayName);
      this.enterSession(view);
    } catch (error) {
      // Kept only when the create may have happened (no answer, or the server's own failure):
      // after a refusal a new press is a new create.
      if (error.code !== ErrorCode.unavailable && error.code !== ErrorCode.internal) this.createKey = null;
      this.showWelcome({ error: describeError(error, 'create') });
    } finally {
      this.welcome.setBusy(false);
    }
  }

  async join({ displayName, code }) {
    this.welcome.setBusy(true);
    try {
      const view = await this.signIn.withSignIn(displayName, () => this.api.joinSession(code, displayName));
      this.signIn.rememberName(displayName);
      this.enterSession(view);
    } catch (error) {
      this.showWelcome({ code, error: describeError(error, 'join') });
    } finally {
      this.welcome.setBusy(false);
    }
  }

  /** Joins the session again under the name this device remembers (or asks for one). */
  rejoin(code) {
    byId('rejoin-button').disabled = true;
    const displayName = rememberedName();
    if (displayName) this.join({ displayName, code });
    else this.showWelcome({ code });
  }

  enterSession(view) {
    this.session.enter(view, this.signIn.identity);
  }

  /**
   * The session is gone for this member: say so and offer the way back, into the same
   * session when `rejoinCode` lets them in again.
   */
  sessionOver(message, rejoinCode = null) {
    forgetSession();
    const ended = byId('ended');
    const another = h('button', { type: 'button', class: rejoinCode ? '' : 'primary', onclick: () => this.showWelcome({ fresh: true }) },
      'Start or join another session');
    ended.replaceChildren(
      h('h1', { id: 'ended-heading', tabindex: '-1' }, 'Session over'),
      h('p', { role: 'alert' }, message),
      ...(rejoinCode ? [h('button', { type: 'button', class: 'primary', id: 'rejoin-button', onclick: () => this.rejoin(rejoinCode) }, 'Join again')] : []),
      another);
    this.showScreen('ended');
    // Focus was on a control of the session screen, now hidden: start from what happened.
    byId('ended-heading').focus();
    document.title = 'OpenJam';
  }

  async leave() {
    const id = this.session.sessionId;
    if (!id) return;
    // Close the socket first: the server closes a leaving member's socket, which must not look like a drop.
    this.session.close();
    this.showWelcome({ fresh: true });
    // Another session entered while the answer was on its way is what the person wants now:
    // a late answer, either way, must not take them out of it.
    const movedOn = () => this.session.sessionId != null;
    try {
      await this.api.leaveSession(id);
    } catch (error) {
      if (movedOn()) return;
      if (!sessionIsGone(error)) {
        // The answer is lost or a refusal: the session says whether the leave was applied.
        const lookup = await this.api.getSession(id).then((view) => ({ view }), (failure) => ({ failure }));
        if (movedOn()) return;
        if (lookup.view || !sessionIsGone(lookup.failure)) {
          // Still a member as far as the server knows: back to the session, so Leave can be
          // pressed again, rather than a welcome screen that pretends otherwise. Unreachable:
          // the session stays remembered, and the next visit opens it again.
          this.notices.show(describeError(error, 'leave'));
          if (lookup.view) this.enterSession(lookup.view);
          return;
        }
        // Applied, its answer lost on the way: the member is out, as they asked.
      }
    }
    if (movedOn()) return;
    forgetSession();
    this.notices.show('You left the session.', 'info');
  }
}

const app = new App();
app.boot().catch((error) => {
  app.notices.show(`OpenJam could not start: ${error.message}`);
});
