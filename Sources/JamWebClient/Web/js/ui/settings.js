// Session settings for the host and co-hosts: lock the queue, keep playing from the
// library when the queue runs dry, and how the queue is ordered; the host can also
// end the session for everybody.
import { QueueOrdering, Role, hasHostControls } from '../protocol.js';
import { confirmButton, h } from './dom.js';

export class SettingsView {
  /** @param {HTMLElement} root @param {{onChange: (patch: object) => void, onEnd: () => void}} actions */
  constructor(root, actions) {
    this.root = root;
    this.locked = h('input', { type: 'checkbox', id: 'setting-locked' });
    this.fallback = h('input', { type: 'checkbox', id: 'setting-fallback' });
    this.ordering = h('select', { id: 'setting-ordering' },
      h('option', { value: QueueOrdering.votes }, 'Most votes first'),
      h('option', { value: QueueOrdering.fair }, 'Take turns (fair)'));
    this.locked.addEventListener('change', () => actions.onChange({ locked: this.locked.checked }));
    this.fallback.addEventListener('change', () => actions.onChange({ fallback: this.fallback.checked }));
    this.ordering.addEventListener('change', () => actions.onChange({ ordering: this.ordering.value }));
    root.replaceChildren(
      h('h2', { id: 'settings-heading' }, 'Session settings'),
      h('div', { class: 'setting' }, this.locked,
        h('label', { for: 'setting-locked' }, 'Lock the queue', h('span', { class: 'hint' }, 'Only the host and co-hosts can add songs.'))),
      h('div', { class: 'setting' }, this.fallback,
        h('label', { for: 'setting-fallback' }, 'Keep the music going', h('span', { class: 'hint' }, 'Shuffle the library when the queue runs dry.'))),
      h('div', { class: 'setting setting-select' },
        h('label', { for: 'setting-ordering' }, 'Queue order'), this.ordering),
      this.end = confirmButton('End the session', 'End it for everybody?', actions.onEnd, { class: 'quiet danger', id: 'end-session' }));
  }

  render(snapshot) {
    const visible = !!snapshot.session && hasHostControls(snapshot.role);
    this.root.hidden = !visible;
    if (!visible) return;
    const settings = snapshot.session.settings;
    // A pending change shows the server's answer when it comes, not the click.
    this.locked.checked = settings.locked;
    this.fallback.checked = settings.fallback;
    this.ordering.value = settings.ordering;
    this.end.hidden = snapshot.role !== Role.host;
  }
}
