// The shared queue in play order: what is up next, then every waiting song with its
// score, the reason for its place ("3 votes", "Alice's turn"), who added it, up and
// down votes (shown at once, rolled back if refused) and, for the adder and the
// hosts, a remove button.
import { hasHostControls } from '../protocol.js';
import { confirmButton, h, heldFocus, onToggle, refocusInPlace, setAttr, setConfirmLabel, setText, syncList } from './dom.js';
import { makeCover, updateCover } from './cover.js';
import { formatTime, plural } from './format.js';

export class QueueView {
  /** @param {HTMLElement} root @param {{onVote: (id: string, value: number) => void, onRemove: (item: object) => void}} actions */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.count = h('span', { class: 'count', id: 'queue-count' });
    this.upNext = h('div', { class: 'up-next', id: 'up-next', hidden: true });
    this.list = h('ol', { class: 'queue-list', id: 'queue-list' });
    this.empty = h('p', { class: 'empty', id: 'queue-empty' }, 'The queue is empty. Search for a song and add it.');
    // Focusable by script only: where focus goes when a removed song leaves none to go to.
    this.heading = h('h2', { id: 'queue-heading', tabindex: '-1' }, 'Queue ', this.count);
    root.replaceChildren(
      this.heading,
      this.upNext, this.list, this.empty);
    this.snapshot = null;
  }

  render(snapshot) {
    this.snapshot = snapshot;
    const entries = snapshot.queue;
    setText(this.count, entries.length ? `(${entries.length})` : '');
    this.empty.hidden = entries.length > 0 || !!snapshot.upNext;
    if (snapshot.upNext) {
      const track = snapshot.upNext.item.track;
      this.upNext.hidden = false;
      setText(this.upNext, `Up next: ${track.name} — ${track.artist} (added by ${snapshot.upNext.item.addedBy.displayName})`);
    } else {
      this.upNext.hidden = true;
    }
    // This person's Remove takes its song's row away when the server's answer comes: their
    // place in the list is kept (refocusInPlace), for their own press only.
    const held = heldFocus(this.list, this.removed);
    if (!held) this.removed = null;
    syncList(this.list, entries, (entry) => entry.item.id, (entry) => this.create(entry), (el, entry, index) => this.update(el, entry, index));
    if (held && refocusInPlace(this.list, held, (row) => row.parts.remove, this.heading)) this.removed = null;
  }

  create(entry) {
    const parts = {
      cover: makeCover('small'),
      title: h('span', { class: 'item-title' }),
      meta: h('span', { class: 'item-meta' }),
      up: h('button', { type: 'button', class: 'vote vote-up', 'aria-pressed': 'false' }, '▲'),
      score: h('span', { class: 'score', 'aria-live': 'off' }),
      down: h('button', { type: 'button', class: 'vote vote-down', 'aria-pressed': 'false' }, '▼'),
    };
    parts.remove = confirmButton('Remove', 'Really remove?', () => {
      this.removed = parts.remove;
      this.actions.onRemove(parts.entry.item);
    }, { class: 'remove quiet' });
    onToggle(parts.up, () => this.actions.onVote(parts.entry.item.id, parts.entry.myVote === 1 ? 0 : 1));
    onToggle(parts.down, () => this.actions.onVote(parts.entry.item.id, parts.entry.myVote === -1 ? 0 : -1));
    const li = h('li', { class: 'queue-item' },
      parts.cover,
      h('span', { class: 'item-text' }, parts.title, parts.meta),
      h('span', { class: 'votes', role: 'group' }, parts.up, parts.score, parts.down),
      parts.remove);
    li.parts = parts;
    return li;
  }

  update(li, entry) {
    const { parts } = li;
    parts.entry = entry;
    const item = entry.item;
    const track = item.track;
    const snapshot = this.snapshot;
    updateCover(parts.cover, track);
    setText(parts.title, track.name);
    const adder = item.addedBy.userId === snapshot.me ? 'you' : item.addedBy.displayName;
    const details = [track.artist, entry.pending ? 'adding…' : item.reason, `added by ${adder}`];
    if (track.durationMs) details.push(formatTime(track.durationMs));
    const meta = details.filter(Boolean).join(' · ');
    setText(parts.meta, meta);
    li.classList.toggle('pending', entry.pending);
    li.classList.toggle('in-flight', entry.voteInFlight);
    li.dataset.score = String(item.score);
    li.dataset.trackId = track.id;
    setText(parts.score, String(item.score));
    setAttr(parts.score, 'aria-label', `score ${item.score}`);
    const voteGroup = parts.up.parentElement;
    voteGroup.hidden = entry.pending;
    setAttr(voteGroup, 'aria-label', `Votes for ${track.name}: ${plural(item.score, 'point', 'points')}`);
    setAttr(parts.up, 'aria-pressed', entry.myVote === 1 ? 'true' : 'false');
    setAttr(parts.down, 'aria-pressed', entry.myVote === -1 ? 'true' : 'false');
    setAttr(parts.up, 'aria-label', entry.myVote === 1 ? `Take back your up vote for ${track.name}` : `Vote ${track.name} up`);
    setAttr(parts.down, 'aria-label', entry.myVote === -1 ? `Take back your down vote for ${track.name}` : `Vote ${track.name} down`);
    const mayRemove = !entry.pending && (item.addedBy.userId === snapshot.me || hasHostControls(snapshot.role));
    parts.remove.hidden = !mayRemove;
    setConfirmLabel(parts.remove, `Remove ${track.name} from the queue`);
  }
}
