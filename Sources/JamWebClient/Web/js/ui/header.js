// The top bar: which session, whether the connection is live (and when it retries),
// and the invite and leave buttons.
import { Phase } from '../connection.js';
import { askBefore, byId, setText } from './dom.js';

export class HeaderView {
  /**
   * @param {{onInviteToggle: () => void, onLeave: () => void, onRetry: () => void}} actions
   */
  constructor(actions) {
    this.session = byId('topbar-session');
    this.name = byId('session-name');
    this.host = byId('session-host');
    this.connection = byId('connection');
    this.connectionState = byId('connection-state');
    this.countdown = byId('connection-countdown');
    this.retry = byId('connection-retry');
    this.actionsBox = byId('topbar-actions');
    this.inviteToggle = byId('invite-toggle');
    this.leave = byId('leave-button');
    this.inviteToggle.addEventListener('click', actions.onInviteToggle);
    // Leaving can end what others count on: the last member's leave ends the session and its
    // queue, and the host's hands hosting to somebody else. Those ask once more, as "End the
    // session" does; any other member just leaves (and may join again with the code).
    this.leaveQuestion = null;
    askBefore(this.leave, 'Leave', () => this.leaveQuestion, actions.onLeave);
    this.retry.addEventListener('click', actions.onRetry);
    this.phase = null;
    /** The announced text of the last wait between tries, kept through the next try. */
    this.offline = null;
  }

  /** Shows or hides the session parts (the welcome screen has none). */
  setInSession(inSession) {
    this.session.hidden = !inSession;
    this.connection.hidden = !inSession;
    this.actionsBox.hidden = !inSession;
  }

  setInviteOpen(open) {
    this.inviteToggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    setText(this.inviteToggle, open ? 'Close invite' : 'Invite');
  }

  render(snapshot) {
    if (snapshot.session) {
      setText(this.name, snapshot.session.name);
      const mine = snapshot.session.hostId === snapshot.me;
      setText(this.host, mine ? 'you are the host' : `host: ${snapshot.session.hostDisplayName}`);
      const others = snapshot.members.some((member) => member.userId !== snapshot.me);
      this.leaveQuestion = !others ? 'Leave and end the session?' : mine ? 'Leave and hand over hosting?' : null;
    }
    this.phase = snapshot.phase;
    this.tick();
  }

  /** The retry countdown moves every tick. */
  tick() {
    const phase = this.phase || { phase: Phase.idle };
    let text;
    let countdown = '';
    let state = phase.phase;
    switch (phase.phase) {
      case Phase.connected: text = 'Live'; this.offline = null; break;
      case Phase.connecting:
        // Between two waits the announced text stays what it was: a screen reader would
        // otherwise read "Reconnecting" and the reason out again at every try.
        if (this.offline) {
          text = this.offline;
          countdown = ' — reconnecting…';
        } else {
          text = phase.attempt > 1 ? 'Reconnecting…' : 'Connecting…';
        }
        break;
      case Phase.retrying: {
        const seconds = Math.max(0, Math.ceil((phase.at - performance.now()) / 1000));
        text = `Offline (${phase.reason})`;
        this.offline = text;
        countdown = ` — retrying in ${seconds} s`;
        break;
      }
      case Phase.failed: text = 'Disconnected'; this.offline = null; break;
      case Phase.closed: text = 'Left'; this.offline = null; break;
      default: text = 'Not connected'; state = 'idle';
    }
    this.connection.dataset.state = state;
    setText(this.connectionState, text);
    setText(this.countdown, countdown);
    this.retry.hidden = phase.phase !== Phase.retrying;
  }
}
