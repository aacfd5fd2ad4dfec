// What has played, newest first: each song with how it ended — played to its end,
// skipped by a host (by name), skipped by the room's skip requests, or removed — so
// people can find the song they liked and see why one stopped.
import { HistoryOutcome } from '../protocol.js';
import { h, setText, syncList } from './dom.js';

/** Most entries shown; the session keeps 100. */
const SHOWN = 20;

/** How an entry ended, in words: "played", "skipped by Ann", "skipped by vote"; "ended" when the outcome is unknown. */
export function endedText(entry, me) {
  const who = entry.endedBy === me ? 'you' : entry.endedByName;
  switch (entry.outcome) {
    case HistoryOutcome.played: return 'played';
    case HistoryOutcome.skipped: return who ? `skipped by ${who}` : 'skipped by vote';
    case HistoryOutcome.removed: return who ? `removed by ${who}` : 'removed';
    // A newer server may end songs in ways this page does not know; say it ended rather
    // than show a wire name or drop the entry.
    default: return who ? `ended by ${who}` : 'ended';
  }
}

export class HistoryView {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.list = h('ol', { class: 'history-list', id: 'history-list' });
    this.empty = h('p', { class: 'empty', id: 'history-empty' }, 'Nothing has played yet.');
    root.replaceChildren(h('h2', { id: 'history-heading' }, 'Played'), this.list, this.empty);
  }

  render(snapshot) {
    const entries = (snapshot.history || []).slice(-SHOWN).reverse();
    this.empty.hidden = entries.length > 0;
    syncList(this.list, entries, (entry) => `${entry.item.id}:${entry.startedAt}`,
      () => {
        const li = h('li', { class: 'history-item' }, h('span', { class: 'item-title' }), h('span', { class: 'item-meta' }));
        return li;
      },
      (li, entry) => {
        const [title, meta] = li.children;
        const track = entry.item.track;
        setText(title, track.name);
        const adder = entry.item.addedBy.userId === snapshot.me ? 'you' : entry.item.addedBy.displayName;
        setText(meta, [track.artist, endedText(entry, snapshot.me), adder ? `added by ${adder}` : ''].filter(Boolean).join(' · '));
        li.dataset.outcome = entry.outcome;
        li.dataset.itemId = entry.item.id;
      });
  }
}
