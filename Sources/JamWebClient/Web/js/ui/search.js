// Search the server's library and add songs. Typing searches as you go (debounced,
// and an older answer never overwrites a newer one); an empty search lists the
// library. Songs already queued or playing say so instead of offering "Add".
import { hasAddCooldown, hasHostControls, mayQueueAnother, nextAddAt } from '../protocol.js';
import { h, setAttr, setText, syncList } from './dom.js';
import { makeCover, updateCover } from './cover.js';
import { formatTime } from './format.js';
import { describeError } from './errors.js';

/** The key that tells tracks apart: the same id may come from two sources. */
function trackKey(track) {
  return `${track.source}:${track.id}`;
}

/** Milliseconds until this member may add again (0: now), by the session's add cooldown. */
function cooldownLeft(snapshot, serverNow) {
  if (!snapshot.session) return 0;
  const me = snapshot.members.find((member) => member.userId === snapshot.me);
  const next = nextAddAt(snapshot.session.settings, me);
  return next == null ? 0 : Math.max(0, next - serverNow);
}

/** How many songs of this member's wait in the queue (adds on their way included), and whether one more fits. */
function queueRoom(snapshot) {
  const waiting = snapshot.queue.filter((entry) => entry.item.addedBy.userId === snapshot.me).length;
  const settings = snapshot.session ? snapshot.session.settings : null;
  return { waiting, full: !mayQueueAnother(settings, waiting, snapshot.role), limit: settings ? settings.maxQueuedPerMember : null };
}

/** True when the queue is locked and this member may not add. */
function lockedOut(snapshot) {
  return !!(snapshot.session && snapshot.session.settings.locked && !hasHostControls(snapshot.role));
}

export class SearchView {
  /**
   * @param {HTMLElement} root
   * @param {{onAdd: (track: object) => void}} actions
   * @param {{search: (q: string) => Promise<{tracks: object[]}>, serverNow: () => number}} env
   */
  constructor(root, actions, env) {
    this.root = root;
    this.actions = actions;
    this.env = env;
    this.input = h('input', {
      type: 'search', id: 'search-input', autocomplete: 'off', placeholder: 'Title, artist or album', 'aria-controls': 'search-results',
      enterkeyhint: 'search',
    });
    this.status = h('p', { class: 'hint', id: 'search-status', role: 'status' });
    this.locked = h('p', { class: 'note', id: 'search-locked', hidden: true }, 'The host has locked the queue: only the host and co-hosts can add songs.');
    // The countdown changes every second, so it is no live region: screen readers hear
    // `announce` instead, once when the wait starts and once when it ends (as the lock).
    this.cooldown = h('p', { class: 'note', id: 'search-cooldown', hidden: true });
    this.full = h('p', { class: 'note', id: 'search-full', hidden: true });
    this.announce = h('p', { class: 'visually-hidden', id: 'search-announce', role: 'status' });
    this.results = h('ul', { class: 'results', id: 'search-results' });
    const form = h('form', { role: 'search', onsubmit: (e) => { e.preventDefault(); this.run(true); } },
      h('label', { for: 'search-input', class: 'visually-hidden' }, 'Search the library'),
      h('div', { class: 'row' }, this.input, h('button', { type: 'submit' }, 'Search')));
    root.replaceChildren(h('h2', { id: 'search-heading' }, 'Add songs'), form, this.locked, this.full, this.cooldown, this.announce, this.status, this.results);
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run(false), 200);
    });
    this.request = 0;
    this.tracks = [];
    this.snapshot = null;
    this.started = false;
  }

  render(snapshot) {
    this.snapshot = snapshot;
    const locked = lockedOut(snapshot);
    this.locked.hidden = !locked;
    // Said when the lock changes within one session; entering a locked session (whose first
    // render has no session yet) is not the host locking it.
    const sessionId = snapshot.session ? snapshot.session.id : null;
    if (sessionId) {
      if (sessionId === this.lockSessionId && locked !== this.wasLocked) {
        setText(this.announce, locked ? 'The host locked the queue: only hosts can add songs now.' : 'The queue is open again: you can add songs.');
      }
      this.lockSessionId = sessionId;
      this.wasLocked = locked;
    }
    this.tick();
    if (!this.started && snapshot.session) {
      this.started = true;
      this.run(false);
    }
    this.renderResults();
  }

  /** The add cooldown counts down with time, not with events. */
  tick() {
    const snapshot = this.snapshot;
    if (!snapshot) return;
    const left = cooldownLeft(snapshot, this.env.serverNow());
    const waiting = left > 0;
    this.cooldown.hidden = !waiting;
    if (waiting) {
      const every = formatTime(snapshot.session.settings.addCooldownSeconds * 1000);
      setText(this.cooldown, `Next add in ${formatTime(left + 999)} (one add every ${every}).`);
    }
    if (waiting !== this.waiting) {
      if (waiting) setText(this.announce, `You can add your next song in ${formatTime(left + 999)}.`);
      else if (this.waiting) setText(this.announce, 'You can add a song again.');
      this.waiting = waiting;
      this.renderResults();
    }
  }

  async run(force) {
    const query = this.input.value.trim();
    if (!force && query === this.lastQuery) return;
    this.lastQuery = query;
    const request = ++this.request;
    setText(this.status, 'Searching…');
    try {
      const answer = await this.env.search(query);
      if (request !== this.request) return;
      this.tracks = answer.tracks || [];
      setText(this.status, this.tracks.length ? '' : query ? `Nothing in the library matches “${query}”.` : 'The library is empty.');
    } catch (error) {
      if (request !== this.request) return;
      this.tracks = [];
      setText(this.status, describeError(error, 'search'));
    }
    this.renderResults();
  }

  renderResults() {
    const snapshot = this.snapshot;
    if (!snapshot) return;
    const taken = new Set();
    const allowDuplicates = snapshot.session && snapshot.session.settings.allowDuplicates;
    if (!allowDuplicates) {
      for (const entry of snapshot.queue) taken.add(trackKey(entry.item.track));
      if (snapshot.nowPlaying) taken.add(trackKey(snapshot.nowPlaying.item.track));
      if (snapshot.upNext) taken.add(trackKey(snapshot.upNext.item.track));
    }
    // An add on its way: a second tap would queue the song twice (or spend a cooldown).
    const adding = new Set(snapshot.queue.filter((entry) => entry.pending).map((entry) => trackKey(entry.item.track)));
    const locked = lockedOut(snapshot);
    // As many of this member's songs wait as the session allows: the server would refuse another.
    const room = queueRoom(snapshot);
    this.full.hidden = !room.full || locked;
    if (room.full) {
      setText(this.full, `You have ${room.waiting} ${room.waiting === 1 ? 'song' : 'songs'} waiting, as many as this session allows (${room.limit}): add more once one has played.`);
    }
    const pressed = this.added === document.activeElement ? this.added : null;
    if (!pressed) this.added = null;
    const place = pressed ? [...this.results.children].indexOf(pressed.closest('li')) : -1;
    syncList(this.results, this.tracks, trackKey, (track) => this.create(track), (li, track) => {
      li.track = track;
      updateCover(li.parts.cover, track);
      setText(li.parts.title, track.name);
      setText(li.parts.meta, [track.artist, track.album, track.durationMs ? formatTime(track.durationMs) : null].filter(Boolean).join(' · '));
      const queued = taken.has(trackKey(track));
      const inFlight = adding.has(trackKey(track));
      li.parts.add.disabled = queued || inFlight || locked || room.full || !!this.waiting;
      setText(li.parts.add, queued ? 'Queued' : inFlight ? 'Adding…' : 'Add');
      setAttr(li.parts.add, 'aria-label', queued ? `${track.name} is already queued` : `Add ${track.name} to the queue`);
    });
    // This person's Add disables itself ("Adding…", then "Queued"): focus would fall to the
    // page's start, so it goes to the next song that can be added, for adding several in a
    // row; with none, or an add cooldown to wait out, to the search field. Only for their own
    // press, and a keyboard's: another member's add of the song they are on moves no focus,
    // and a tap that focused the field would open a phone's on-screen keyboard.
    if (pressed && (pressed.disabled || !pressed.isConnected)) {
      this.added = null;
      if (this.addedByKeyboard) {
        const cooldown = snapshot.session && hasAddCooldown(snapshot.session.settings, snapshot.role);
        const next = !cooldown && [...this.results.children].slice(place + 1).map((li) => li.parts.add).find((add) => !add.disabled);
        (next || this.input).focus({ preventScroll: true });
      }
    }
  }

  create(track) {
    const parts = {
      cover: makeCover('small'),
      title: h('span', { class: 'item-title' }),
      meta: h('span', { class: 'item-meta' }),
      add: h('button', { type: 'button', class: 'add' }, 'Add'),
    };
    const li = h('li', { class: 'result' }, parts.cover, h('span', { class: 'item-text' }, parts.title, parts.meta), parts.add);
    li.parts = parts;
    li.track = track;
    parts.add.addEventListener('click', (event) => {
      this.added = parts.add;
      // A click a key made (Enter, Space) has no pointer, so no click count.
      this.addedByKeyboard = event.detail === 0;
      this.actions.onAdd(li.track);
    });
    return li;
  }
}
