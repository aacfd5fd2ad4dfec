// The session screen's wiring: for the session being shown, its store (socket and
// optimistic state), clock sync and sync engine, connected to the views, and the
// host's REST actions. Everything the person triggers ends either in a visible
// change or in a message in words.
import { ClockSync } from './clock.js';
import { Phase } from './connection.js';
import { DeviceSyncPanel } from './device-sync-page.js';
import { saveLastSession } from './identity.js';
import { AudioPlayer } from './player.js';
import { Command, ErrorCode, joinPath } from './protocol.js';
import { SessionStore } from './store.js';
import { SyncEngine } from './sync-engine.js';
import { initialSyncStatus } from './sync-status.js';
import { MediaSessionControls } from './media-session.js';
import { byId } from './ui/dom.js';
import { describeError, describeSessionFailure } from './ui/errors.js';
import { InviteView } from './ui/invite.js';
import { MembersView } from './ui/members.js';
import { NowPlayingView } from './ui/now-playing.js';
import { QueueView } from './ui/queue.js';
import { SearchView } from './ui/search.js';
import { SettingsView } from './ui/settings.js';
import { HistoryView } from './ui/history.js';

const TICK_MS = 200;
const OFF_STATUS = Object.freeze(initialSyncStatus());

export class SessionPage {
  /**
   * @param {object} options
   * @param {import('./api.js').Api} options.api
   * @param {import('./ui/header.js').HeaderView} options.header
   * @param {import('./ui/notices.js').Notices} options.notices
   * @param {() => void} options.onShow shows the session screen
   * @param {(message: string, rejoinCode: string|null) => void} options.onOver the session is over for
   *   this member; `rejoinCode` when joining again would let them back in
   * @param {(name: string) => void} options.onRenamed the member changed their name: this device remembers it
   */
  constructor({ api, header, notices, onShow, onOver, onRenamed }) {
    this.api = api;
    this.header = header;
    this.notices = notices;
    this.onShow = onShow;
    this.onOver = onOver;
    this.onRenamed = onRenamed;
    this.player = new AudioPlayer(byId('audio-host'));
    this.player.onError = (error) => this.playbackBlocked(error);
    this.player.onOutsidePause = () => this.pausedByDevice();
    this.mediaSession = new MediaSessionControls({ onPlay: () => this.playHere(true), onStop: () => this.playHere(false) });
    this.playingTrack = null;
    this.store = null;
    this.clock = null;
    this.engine = null;
    this.inviteOpen = false;
    this.shownRejection = null;
    this.views = null;
    this.ticker = null;
    this.unsubscribe = null;
    /** The last settings change sent; the next one waits for its answer. */
    this.settingsSent = Promise.resolve();
  }

  /** The id of the session shown, or null. */
  get sessionId() {
    return this.store ? this.store.sessionId : null;
  }

  makeViews() {
    if (this.views) return this.views;
    const env = {
      serverNow: () => (this.store ? this.store.serverNow() : Date.now()),
      syncInfo: () => this.syncInfo(),
      search: (q) => this.api.search(q, 50),
    };
    this.views = {
      invite: new InviteView(byId('invite'), { onNewCode: () => this.newJoinCode() }),
      nowPlaying: new NowPlayingView(byId('now-playing'), {
        onSkip: () => this.store.skip(),
        onRequestSkip: () => this.store.requestSkip(),
        onWithdrawSkipRequest: () => this.store.withdrawSkipRequest(),
        // For the song shown: sent again after a reconnect, these must not touch the next one.
        onPause: (epoch) => this.store.perform(Command.pause, { epoch }, 'pause'),
        onResume: (epoch) => this.store.perform(Command.resume, { epoch }, 'resume'),
        onPlay: () => this.store.perform(Command.play, undefined, 'play'),
        onSeek: (positionMs, epoch) => this.store.perform(Command.seek, { positionMs, epoch }, 'seek'),
        onDeviceToggle: (on) => this.setDevicePlayback(on),
        onVolume: (v) => this.player.setVolume(v),
      }, env),
      queue: new QueueView(byId('queue'), {
        onVote: (itemId, value) => this.store.vote(itemId, value),
        onRemove: (item) => this.store.perform(Command.removeFromQueue, { itemId: item.id }, 'remove', item.track.name),
      }),
      history: new HistoryView(byId('history')),
      search: new SearchView(byId('search'), { onAdd: (track) => this.store.add(track) }, env),
      members: new MembersView(byId('members'), {
        onRole: (member, role) => this.store.perform(Command.promote, { userId: member.userId, role }, 'role'),
        onKick: (member) => this.store.perform(Command.kick, { userId: member.userId }, 'kick'),
        onRename: (name) => this.rename(name),
      }),
      settings: new SettingsView(byId('host-settings'), {
        onChange: (patch) => this.changeSettings(patch),
        onEnd: () => this.endSession(),
      }),
    };
    // After the views: they fill their panels, and this adds to two of them.
    this.deviceSync = new DeviceSyncPanel({ player: this.player, notices: this.notices });
    return this.views;
  }

  /**
   * Shows the session `view` (a REST answer) and follows it live.
   * @param {{token: string, userId: string}} identity kept current by `SignIn` when it refreshes the token
   */
  enter(view, identity) {
    this.close();
    const views = this.makeViews();
    this.clock = new ClockSync();
    this.store = new SessionStore({ sessionId: view.session.id, token: () => identity.token, me: identity.userId, clock: this.clock });
    this.engine = new SyncEngine({
      player: this.player, clock: this.clock, post: (type, data) => this.store.connection.post(type, data),
      device: this.deviceSync.device(identity.userId),
    });
    this.deviceSync.attach(this.store, this.engine, this.clock);
    this.engine.start();
    this.engine.onChange(() => views.nowPlaying.tick());
    this.store.onEnvelope((envelope) => this.engine.handle(envelope));
    this.store.onReconnected(() => this.engine.reconnected());
    this.shownRejection = null;
    this.inviteOpen = false;
    byId('invite').hidden = true;
    this.header.setInviteOpen(false);
    views.nowPlaying.setDevice(false);
    this.mediaSession.attach();
    saveLastSession(view.session);
    this.onShow();
    const store = this.store;
    this.unsubscribe = store.subscribe((snapshot) => {
      if (store === this.store) this.render(snapshot);
    });
    this.store.start(view);
    clearInterval(this.ticker);
    this.ticker = setInterval(() => {
      this.header.tick();
      views.nowPlaying.tick();
      views.search.tick();
    }, TICK_MS);
    byId('main').focus({ preventScroll: true });
  }

  render(snapshot) {
    const views = this.views;
    if (snapshot.session) {
      const path = joinPath(snapshot.session.joinCode);
      if (location.pathname !== path) {
        // The address is the invite link, so a reload (or a new join code) keeps working.
        history.replaceState(null, '', path);
        saveLastSession(snapshot.session);
      }
      document.title = `${snapshot.session.name} — OpenJam`;
    }
    this.header.render(snapshot);
    views.invite.render(snapshot);
    views.nowPlaying.render(snapshot);
    this.playingTrack = snapshot.nowPlaying ? snapshot.nowPlaying.item.track : null;
    this.showOnLockScreen();
    views.queue.render(snapshot);
    views.history.render(snapshot);
    views.search.render(snapshot);
    views.members.render(snapshot);
    views.settings.render(snapshot);
    this.deviceSync.render(snapshot);
    const rejection = snapshot.lastRejection;
    if (rejection && rejection.id !== this.shownRejection) {
      this.shownRejection = rejection.id;
      this.notices.show(describeError(rejection, rejection.action, rejection.subject));
    }
    if (snapshot.ended) {
      this.over(`The session has ended${snapshot.ended.reason ? ` (${snapshot.ended.reason})` : ''}.`);
    } else if (snapshot.phase.phase === Phase.failed) {
      const error = snapshot.phase.error;
      // No longer a member (away too long, or left from another device) or signed out: the
      // code lets this member in again. Removed by the host (forbidden) or gone, it does not.
      const rejoinable = [ErrorCode.notMember, ErrorCode.unauthorized].includes(error.code) && snapshot.session;
      this.over(describeSessionFailure(error), rejoinable ? snapshot.session.joinCode : null);
    }
  }

  /** The session is gone for this member: stop, and let the page say so (and offer `rejoinCode`'s way back). */
  over(message, rejoinCode = null) {
    if (!this.store) return;
    this.close();
    this.onOver(message, rejoinCode);
  }

  /** Stops everything belonging to the current session. */
  close() {
    if (this.unsubscribe) this.unsubscribe();
    this.unsubscribe = null;
    clearInterval(this.ticker);
    this.ticker = null;
    if (this.engine) this.engine.stop();
    if (this.store) this.store.stop();
    this.mediaSession.detach();
    this.playingTrack = null;
    if (this.deviceSync) this.deviceSync.detach();
    this.player.unload();
    this.engine = null;
    this.store = null;
    this.clock = null;
  }

  /** Skips the reconnect wait (the header's "Retry now"). */
  retryNow() {
    if (this.store) this.store.connection.connectNow();
  }

  toggleInvite() {
    this.inviteOpen = !this.inviteOpen;
    byId('invite').hidden = !this.inviteOpen;
    this.header.setInviteOpen(this.inviteOpen);
    if (this.inviteOpen) byId('invite-link').focus();
  }

  /**
   * Sends one settings change once those made before it are answered: two quick toggles sent
   * side by side may reach the server in either order, and the session would keep the first.
   * @returns {Promise<void>} settled when this change is answered
   */
  changeSettings(patch) {
    const store = this.store;
    const send = async () => {
      try {
        await this.api.updateSession(store.sessionId, { settings: patch });
      } catch (error) {
        store.reject('settings', error);
      }
    };
    this.settingsSent = this.settingsSent.then(send);
    return this.settingsSent;
  }

  async endSession() {
    const store = this.store;
    try {
      // Everybody, this page included, then gets sessionEnded and the closing screen.
      await this.api.endSession(store.sessionId);
    } catch (error) {
      store.reject('end', error);
    }
  }

  /**
   * Changes the caller's name in the session: joining again under a new name is how the
   * server renames a member (and the songs they added). Throws after saying why it failed.
   */
  async rename(name) {
    const snapshot = this.store.snapshot();
    try {
      const view = await this.api.joinSession(snapshot.session.joinCode, name);
      // The name as the server keeps it (trimmed): the next join from this device uses it.
      const me = (view.members || []).find((member) => member.userId === this.store.me);
      this.onRenamed(me ? me.displayName : name);
    } catch (error) {
      this.notices.show(describeError(error, 'rename'));
      throw error;
    }
  }

  async newJoinCode() {
    const store = this.store;
    try {
      await this.api.updateSession(store.sessionId, { regenerateJoinCode: true });
      this.notices.show('New join code made: the old code and link no longer work.', 'info');
    } catch (error) {
      store.reject('code', error);
    }
  }

  setDevicePlayback(on) {
    if (!this.engine) return;
    // Called from the click: the browser lets audio start from here on.
    if (on) this.player.unlock();
    this.engine.setEnabled(on);
    this.showOnLockScreen();
  }

  /** "Play on this device" or "Stop playing here" from the lock screen, a notification or headphones. */
  playHere(on) {
    if (!this.engine || this.engine.enabled === on) return;
    this.views.nowPlaying.setDevice(on);
    this.setDevicePlayback(on);
  }

  /** The song, and whether this device plays it, as the lock screen shows them. */
  showOnLockScreen() {
    this.mediaSession.show(this.playingTrack, !!this.engine && this.engine.enabled);
  }

  /**
   * The device paused the sound itself (its lock screen or notification, headphones
   * unplugged, a call): this device stops following, as "Stop playing here" does. Left
   * on, the correction loop would start the song again a moment later, out of the speaker
   * when the headphones came out.
   */
  pausedByDevice() {
    if (!this.engine || !this.engine.enabled) return;
    this.playHere(false);
    this.notices.show('This device paused the sound, so it stopped playing here. Press “Play on this device” to listen again.', 'info');
  }

  playbackBlocked(error) {
    if (!this.engine) return;
    this.engine.setEnabled(false);
    this.views.nowPlaying.setDevice(false);
    this.showOnLockScreen();
    const message = error && error.name === 'NotAllowedError'
      ? 'The browser blocked the sound. Press “Play on this device” to allow it.'
      : `The audio stopped: ${error && error.message ? error.message : 'unknown error'}.`;
    this.notices.show(`Couldn't play on this device: ${message}`);
  }

  syncInfo() {
    const engine = this.engine;
    const now = performance.now();
    return {
      estimate: this.clock ? this.clock.estimate : null,
      now,
      status: engine ? engine.status : OFF_STATUS,
      enabled: !!engine && engine.enabled,
      loadError: engine ? engine.loadError : null,
    };
  }
}
