// Session settings for the host and co-hosts: lock the queue, keep playing from the
// library when the queue runs dry, how the queue is ordered, how many skip requests
// skip a song, whether a song may be queued twice, how many people may join, and how
// often and how much a member may add; the host can also end the session for everybody.
import { QueueOrdering, Role, SettingsLimits, hasHostControls, readSettingCount } from '../protocol.js';
import { confirmButton, h } from './dom.js';
import { typedNumber } from './typed-number.js';
import { ADD_COOLDOWNS, SKIP_THRESHOLDS, closestChoice } from '../settings-choices.js';

/** Words that open a sentence: the shared choices are written to go inside one. */
function capitalised(words) {
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export class SettingsView {
  /** @param {HTMLElement} root @param {{onChange: (patch: object) => void, onEnd: () => void}} actions */
  constructor(root, actions) {
    this.root = root;
    this.locked = h('input', { type: 'checkbox', id: 'setting-locked' });
    this.fallback = h('input', { type: 'checkbox', id: 'setting-fallback' });
    this.duplicates = h('input', { type: 'checkbox', id: 'setting-duplicates' });
    this.ordering = h('select', { id: 'setting-ordering' },
      h('option', { value: QueueOrdering.votes }, 'Most votes first'),
      h('option', { value: QueueOrdering.fair }, 'Take turns (fair)'));
    this.threshold = h('select', { id: 'setting-threshold' },
      ...SKIP_THRESHOLDS.map(({ value, words }) => h('option', { value: String(value) }, `More than ${words} ask`)));
    this.cooldown = h('select', { id: 'setting-cooldown' },
      ...ADD_COOLDOWNS.map(({ value, words }) => h('option', { value: String(value) }, capitalised(words))));
    this.maxMembers = h('input', { type: 'number', id: 'setting-max-members', min: 1, max: SettingsLimits.memberLimit, step: 1, inputmode: 'numeric' });
    this.maxQueued = h('input', { type: 'number', id: 'setting-max-queued', min: 1, max: SettingsLimits.queueLimit, step: 1, inputmode: 'numeric' });
    this.locked.addEventListener('change', () => actions.onChange({ locked: this.locked.checked }));
    this.fallback.addEventListener('change', () => actions.onChange({ fallback: this.fallback.checked }));
    this.duplicates.addEventListener('change', () => actions.onChange({ allowDuplicates: this.duplicates.checked }));
    this.ordering.addEventListener('change', () => actions.onChange({ ordering: this.ordering.value }));
    this.threshold.addEventListener('change', () => actions.onChange({ skipThreshold: Number(this.threshold.value) }));
    this.cooldown.addEventListener('change', () => actions.onChange({ addCooldownSeconds: Number(this.cooldown.value) }));
    for (const [input, key, limit] of [[this.maxMembers, 'maxMembers', SettingsLimits.memberLimit],
      [this.maxQueued, 'maxQueuedPerMember', SettingsLimits.queueLimit]]) {
      // Empty, not a number, fractional or out of range: said on the field, nothing sent.
      input.addEventListener('change', () => typedNumber(input, (text) => readSettingCount(text, limit), (read) => actions.onChange({ [key]: read.value })));
    }
    root.replaceChildren(
      h('h2', { id: 'settings-heading' }, 'Session settings'),
      h('div', { class: 'setting' }, this.locked,
        h('label', { for: 'setting-locked' }, 'Lock the queue', h('span', { class: 'hint' }, 'Only the host and co-hosts can add songs.'))),
      h('div', { class: 'setting' }, this.fallback,
        h('label', { for: 'setting-fallback' }, 'Keep the music going', h('span', { class: 'hint' }, 'Shuffle the library when the queue runs dry.'))),
      h('div', { class: 'setting' }, this.duplicates,
        h('label', { for: 'setting-duplicates' }, 'Allow a song twice', h('span', { class: 'hint' }, 'A song may be queued while it is queued or playing.'))),
      h('div', { class: 'setting setting-select' },
        h('label', { for: 'setting-ordering' }, 'Queue order'), this.ordering),
      h('div', { class: 'setting setting-select' },
        h('label', { for: 'setting-threshold' }, 'Skip a song when'), this.threshold),
      h('div', { class: 'setting setting-select' },
        h('label', { for: 'setting-cooldown' }, 'Members add'), this.cooldown),
      h('div', { class: 'setting setting-select' },
        h('label', { for: 'setting-max-queued' }, 'Songs waiting per member'), this.maxQueued),
      h('div', { class: 'setting setting-select' },
        h('label', { for: 'setting-max-members' }, 'Most people'), this.maxMembers),
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
    this.duplicates.checked = settings.allowDuplicates;
    this.ordering.value = settings.ordering;
    this.threshold.value = String(SKIP_THRESHOLDS[closestChoice(SKIP_THRESHOLDS, settings.skipThreshold)].value);
    this.cooldown.value = String(ADD_COOLDOWNS[closestChoice(ADD_COOLDOWNS, settings.addCooldownSeconds || 0)].value);
    if (document.activeElement !== this.maxMembers) this.maxMembers.value = String(settings.maxMembers);
    if (document.activeElement !== this.maxQueued) this.maxQueued.value = String(settings.maxQueuedPerMember);
    this.end.hidden = snapshot.role !== Role.host;
  }
}
