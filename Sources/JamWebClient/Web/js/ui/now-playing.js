// Now playing: cover, title, who added it, a progress bar that follows the server's
// timeline (mapped through the clock offset, so it is right even when this device
// does not play) and that hosts drag to seek, skip requests, the host's playback
// controls, and "play on this device" with its sync indicator.
import { PlaybackState, hasHostControls, isPlayable } from '../protocol.js';
import { fromNowPlaying, positionAt } from '../timeline.js';
import { h, onToggle, setAttr, setText, untilAnswered } from './dom.js';
import { makeCover, updateCover } from './cover.js';
import { formatTime } from './format.js';
import { SyncIndicator } from './sync-indicator.js';

/** Whether this browser lets a page set an audio element's volume (iOS reads it back as 1). */
const VOLUME_SETTABLE = (() => {
  if (typeof document === 'undefined') return true;
  const probe = document.createElement('audio');
  probe.volume = 0.5;
  return probe.volume === 0.5;
})();

/** What the panel says when nothing plays. */
const EMPTY_TEXT = 'Nothing is playing. Add a song: the first one starts at once.';

export class NowPlayingView {
  /**
   * @param {HTMLElement} root
   * @param {object} actions onSkip, onRequestSkip, onPause(epoch), onResume(epoch), onPlay, onSeek(ms, epoch), onDeviceToggle(on), onVolume(v)
   * @param {object} env serverNow(), syncInfo()
   */
  constructor(root, actions, env) {
    this.root = root;
    this.actions = actions;
    this.env = env;
    this.cover = makeCover('large');
    this.title = h('p', { class: 'np-title', id: 'np-title' });
    this.artist = h('p', { class: 'np-artist', id: 'np-artist' });
    this.addedBy = h('p', { class: 'np-added', id: 'np-added' });
    this.state = h('p', { class: 'np-state', id: 'np-state' });
    this.progress = h('progress', { class: 'np-progress', id: 'np-progress', max: 1, value: 0, 'aria-label': 'Song progress' });
    // Hosts get a slider in the bar's place: dragging it moves the song for everybody.
    this.seek = h('input', { type: 'range', class: 'np-seek', id: 'np-seek', min: 0, max: 1, step: 1000, value: 0, hidden: true, 'aria-label': 'Seek' });
    this.seek.addEventListener('input', () => {
      // A drag that outlived its song stays the old song's until it is let go.
      if (this.staleDrag) return;
      if (!this.dragging) this.dragEpoch = this.currentEpoch();
      this.dragging = true;
      setText(this.elapsed, formatTime(Number(this.seek.value)));
    });
    this.seek.addEventListener('change', () => {
      const meant = this.dragEpoch;
      const stale = this.staleDrag;
      this.dragging = false;
      this.staleDrag = false;
      // A drag that outlived its song does not move the next one to the old one's place.
      if (stale || meant !== this.currentEpoch()) return;
      actions.onSeek(Math.round(Number(this.seek.value)), meant);
    });
    // Let go where it started, a slider fires no change: the drag ends all the same, or the
    // bar would stop following the song. (A change that does come still seeks, or not, by its epoch.)
    for (const type of ['pointerup', 'pointercancel', 'blur']) {
      this.seek.addEventListener(type, () => {
        this.dragging = false;
        this.staleDrag = false;
      });
    }
    this.dragging = false;
    this.staleDrag = false;
    this.dragEpoch = null;
    this.elapsed = h('span', { id: 'np-elapsed' }, '0:00');
    this.total = h('span', { id: 'np-total' }, '–:––');
    this.unplayable = h('p', { class: 'np-note', id: 'np-unplayable', hidden: true },
      'This song is not from the server\'s library, so it is not playable on this device; the progress bar still follows the session.');
    // A toggle: pressed while the member's request counts; pressing again takes it back.
    this.skipRequest = h('button', { type: 'button', id: 'skip-request', 'aria-pressed': 'false' }, 'Vote to skip');
    onToggle(this.skipRequest, () => (this.skipRequest.getAttribute('aria-pressed') === 'true' ? actions.onWithdrawSkipRequest() : actions.onRequestSkip()));
    this.skip = h('button', { type: 'button', id: 'host-skip', onclick: () => actions.onSkip() }, 'Skip');
    this.pauseResume = h('button', { type: 'button', id: 'host-pause', onclick: () => this.togglePause() }, 'Pause');
    this.play = h('button', { type: 'button', id: 'host-play', class: 'primary', onclick: () => untilAnswered(this.play, actions.onPlay()) }, 'Play the queue');
    this.hostControls = h('div', { class: 'host-controls', role: 'group', 'aria-label': 'Host controls' }, this.skip, this.pauseResume);
    this.device = h('button', { type: 'button', id: 'device-toggle', class: 'device-toggle', 'aria-pressed': 'false' }, 'Play on this device');
    onToggle(this.device, () => this.toggleDevice());
    this.volume = h('input', {
      type: 'range', id: 'device-volume', min: 0, max: 1, step: 0.05, value: 1, 'aria-label': 'Volume on this device',
      oninput: () => actions.onVolume(Number(this.volume.value)),
    });
    this.sync = new SyncIndicator();
    this.body = h('div', { class: 'np-body' },
      this.cover,
      h('div', { class: 'np-text' }, this.title, this.artist, this.addedBy, this.state));
    this.empty = h('p', { class: 'empty', id: 'np-empty', hidden: true }, EMPTY_TEXT);
    // Focusable by script only: where focus goes when the control that had it goes away.
    this.heading = h('h2', { id: 'now-playing-heading', tabindex: '-1' }, 'Now playing');
    root.replaceChildren(
      this.heading,
      this.empty,
      this.body,
      h('div', { class: 'np-progress-row' }, this.elapsed, this.progress, this.seek, this.total),
      this.unplayable,
      h('div', { class: 'np-controls' }, this.skipRequest, this.hostControls, this.play),
      h('div', { class: 'device-row' }, this.device, h('label', { class: 'volume' }, h('span', { class: 'visually-hidden' }, 'Volume'), this.volume)),
      this.sync.root);
    this.snapshot = null;
    this.deviceOn = false;
  }

  /** The epoch of the song shown, null when none. */
  currentEpoch() {
    const now = this.snapshot && this.snapshot.nowPlaying;
    return now ? now.epoch : null;
  }

  togglePause() {
    const now = this.snapshot && this.snapshot.nowPlaying;
    if (!now) return;
    untilAnswered(this.pauseResume, now.state === PlaybackState.paused ? this.actions.onResume(now.epoch) : this.actions.onPause(now.epoch));
  }

  toggleDevice() {
    this.setDevice(!this.deviceOn);
    this.actions.onDeviceToggle(this.deviceOn);
  }

  setDevice(on) {
    this.deviceOn = on;
    setAttr(this.device, 'aria-pressed', on ? 'true' : 'false');
    setText(this.device, on ? 'Stop playing here' : 'Play on this device');
    // Where the page cannot set an element's volume (iPhones and iPads take it from the
    // hardware buttons only), a slider would move and change nothing.
    this.volume.hidden = !on || !VOLUME_SETTABLE;
  }

  render(snapshot) {
    this.snapshot = snapshot;
    const focused = this.root.contains(document.activeElement) ? document.activeElement : null;
    this.update(snapshot);
    // A host's Skip hides the controls it sits in, Vote to skip disables itself, Play hides
    // once a song plays: focus on the control would fall to the page's start, so it goes to
    // the panel's heading instead (a screen reader then reads what is playing).
    if (focused && focused !== this.heading && (focused.disabled || focused.offsetParent === null || !this.root.contains(focused))) {
      this.heading.focus({ preventScroll: true });
    }
  }

  update(snapshot) {
    const now = snapshot.nowPlaying;
    // The song changed under a drag: the slider follows the new one until the drag is let go.
    if (this.dragging && this.currentEpoch() !== this.dragEpoch) {
      this.dragging = false;
      this.staleDrag = true;
    }
    const host = hasHostControls(snapshot.role);
    // A host's skip on its way hides the song at once; the next one comes with the answer.
    const skipping = !now && !!snapshot.skipping;
    this.empty.hidden = !!now;
    setText(this.empty, skipping ? 'Skipping…' : EMPTY_TEXT);
    this.body.hidden = !now;
    this.root.classList.toggle('idle', !now);
    if (now) {
      const track = now.item.track;
      updateCover(this.cover, track);
      setText(this.title, track.name);
      setText(this.artist, [track.artist, track.album].filter(Boolean).join(' — '));
      setText(this.addedBy, `Added by ${now.item.addedBy.userId === snapshot.me ? 'you' : now.item.addedBy.displayName}`);
      this.root.dataset.itemId = now.item.id;
      this.root.dataset.epoch = String(now.epoch);
    } else {
      delete this.root.dataset.itemId;
      delete this.root.dataset.epoch;
    }
    this.unplayable.hidden = !now || isPlayable(now.item.track);
    const requests = snapshot.skipRequests;
    this.skipRequest.hidden = !now;
    this.skipRequest.disabled = !now;
    setAttr(this.skipRequest, 'aria-pressed', requests.mine ? 'true' : 'false');
    setAttr(this.skipRequest, 'title', requests.mine ? 'Press again to take your request back' : 'Ask to skip this song');
    setText(this.skipRequest, requests.mine
      ? `Skip requested (${requests.count} of ${requests.needed})`
      : `Vote to skip (${requests.count} of ${requests.needed})`);
    this.hostControls.hidden = !host || !now;
    if (now) {
      setText(this.pauseResume, now.state === PlaybackState.paused ? 'Resume' : 'Pause');
      setAttr(this.pauseResume, 'aria-label', now.state === PlaybackState.paused ? 'Resume for everybody' : 'Pause for everybody');
      setAttr(this.skip, 'aria-label', 'Skip this song for everybody');
    }
    // With the library shuffle on, Play starts it even while the queue is empty.
    const playable = snapshot.queue.some((entry) => !entry.pending) || !!(snapshot.session && snapshot.session.settings.fallback);
    this.play.hidden = !host || !!now || skipping || !playable;
    setText(this.play, snapshot.queue.some((entry) => !entry.pending) ? 'Play the queue' : 'Shuffle the library');
    const seekable = host && !!now && !!now.item.track.durationMs;
    this.seek.hidden = !seekable;
    this.progress.hidden = seekable;
    this.tick();
  }

  /** Progress and sync numbers move with time, not with events. */
  tick() {
    const snapshot = this.snapshot;
    const now = snapshot && snapshot.nowPlaying;
    const info = this.env.syncInfo();
    this.sync.update(info);
    if (!now) {
      this.progress.value = 0;
      setText(this.elapsed, '0:00');
      setText(this.total, '–:––');
      setText(this.state, '');
      return;
    }
    const serverNow = this.env.serverNow();
    const duration = now.item.track.durationMs;
    const position = positionAt(fromNowPlaying(now), serverNow);
    if (duration) {
      this.progress.max = duration;
      this.progress.value = Math.min(duration, position);
    } else {
      this.progress.removeAttribute('value');
    }
    setAttr(this.progress, 'aria-valuetext', `${formatTime(position)} of ${formatTime(duration)}`);
    // While a host drags, the slider and the time show where they are going.
    if (!this.dragging && duration) {
      // The last second is out of reach: the server refuses a seek to the very end.
      this.seek.max = String(Math.max(0, duration - 1000));
      this.seek.value = String(Math.min(duration, position));
      setAttr(this.seek, 'aria-valuetext', `${formatTime(position)} of ${formatTime(duration)}`);
    }
    if (!this.dragging) setText(this.elapsed, formatTime(position));
    setText(this.total, formatTime(duration));
    let state;
    if (now.state === PlaybackState.paused) state = 'Paused';
    else if (serverNow < now.anchorMs) state = `Starting in ${Math.max(0.1, (now.anchorMs - serverNow) / 1000).toFixed(1)} s`;
    else if (duration && position >= duration) state = 'Finishing…';
    else state = 'Playing';
    setText(this.state, state);
    this.root.dataset.state = now.state;
  }
}
