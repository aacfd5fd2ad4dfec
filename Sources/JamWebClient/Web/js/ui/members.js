// Who is here: names, roles, who is connected. The host can make members co-hosts
// (who then get the host controls), hand the session over, or remove someone; each member
// can change their own name.
import { Limits, Role } from '../protocol.js';
import { checkDisplayName, describeTextProblem } from '../text-limits.js';
import { confirmButton, h, heldFocus, onToggle, refocusInPlace, setAttr, setConfirmLabel, setText, syncList } from './dom.js';

const ROLE_NAMES = { [Role.host]: 'host', [Role.cohost]: 'co-host', [Role.member]: '' };

export class MembersView {
  /**
   * @param {HTMLElement} root
   * @param {{onRole: (member: object, role: string) => void, onKick: (member: object) => void,
   *   onRename: (name: string) => Promise<void>}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.count = h('span', { class: 'count', id: 'members-count' });
    this.list = h('ul', { class: 'members-list', id: 'members-list' });
    // Focusable by script only: where focus goes when a removed member's row had it.
    this.heading = h('h2', { id: 'members-heading', tabindex: '-1' }, 'People ', this.count);
    root.replaceChildren(this.heading, this.list);
    this.snapshot = null;
    this.renameForm = this.makeRenameForm();
  }

  /** The form that changes the caller's own name, shown in place of it. */
  makeRenameForm() {
    const input = h('input', { type: 'text', id: 'rename-input', autocomplete: 'nickname', 'aria-label': 'Your new name' });
    const save = h('button', { type: 'submit', id: 'rename-save', class: 'small' }, 'Save');
    const cancel = h('button', { type: 'button', class: 'quiet small', id: 'rename-cancel' }, 'Cancel');
    const error = h('p', { class: 'form-error', id: 'rename-error', role: 'alert', hidden: true });
    const form = h('form', { class: 'rename', id: 'rename-form' }, input, save, cancel, error);
    form.hidden = true;
    const close = () => {
      form.hidden = true;
      const mine = this.list.querySelector('li.member.mine');
      if (mine) mine.parts.rename.focus();
    };
    cancel.addEventListener('click', close);
    form.addEventListener('keydown', (event) => { if (event.key === 'Escape') close(); });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (save.disabled) return;
      const check = checkDisplayName(input.value);
      const words = describeTextProblem(check, { subject: 'A name', max: Limits.maxDisplayName, empty: 'Enter a name, so others know who added what.' });
      error.hidden = !words;
      if (words) {
        setText(error, words);
        input.focus();
        return;
      }
      const { value } = check;
      save.disabled = true;
      try {
        await this.actions.onRename(value);
        close();
      } catch {
        // The page's notices say why; the form stays for another try.
      } finally {
        save.disabled = false;
      }
    });
    return form;
  }

  render(snapshot) {
    this.snapshot = snapshot;
    const order = { [Role.host]: 0, [Role.cohost]: 1, [Role.member]: 2 };
    const members = snapshot.members.slice().sort((a, b) =>
      (order[a.role] - order[b.role]) || (Number(b.connected) - Number(a.connected)) || a.displayName.localeCompare(b.displayName));
    const online = members.filter((m) => m.connected).length;
    setText(this.count, `(${online} of ${members.length} here)`);
    // The host's Remove takes the member's row away when the server's answer comes: their
    // place in the list is kept (refocusInPlace), for their own press only.
    const held = heldFocus(this.list, this.kicked);
    if (!held) this.kicked = null;
    syncList(this.list, members, (m) => m.userId, (m) => this.create(m), (li, m) => this.update(li, m));
    if (held && refocusInPlace(this.list, held, (row) => row.parts.kick, this.heading)) this.kicked = null;
  }

  create() {
    const parts = {
      dot: h('span', { class: 'presence', 'aria-hidden': 'true' }),
      name: h('span', { class: 'member-name' }),
      role: h('span', { class: 'badge' }),
      status: h('span', { class: 'visually-hidden' }),
      promote: h('button', { type: 'button', class: 'quiet small' }),
      rename: h('button', { type: 'button', class: 'quiet small' }, 'Change name'),
    };
    parts.rename.addEventListener('click', () => {
      const form = this.renameForm;
      const input = form.querySelector('input');
      input.value = parts.member.displayName;
      form.querySelector('.form-error').hidden = true;
      // Inside the member's own row: the list keeps its rows by key and drops anything else.
      li.append(form);
      form.hidden = false;
      input.focus();
      input.select();
    });
    parts.handOver = confirmButton('Make host', 'Hand over?', () => this.actions.onRole(parts.member, Role.host), { class: 'quiet small' });
    parts.kick = confirmButton('Remove', 'Really remove?', () => {
      this.kicked = parts.kick;
      this.actions.onKick(parts.member);
    }, { class: 'quiet small danger' });
    onToggle(parts.promote, () => {
      this.actions.onRole(parts.member, parts.member.role === Role.cohost ? Role.member : Role.cohost);
    });
    const li = h('li', { class: 'member' },
      parts.dot, parts.name, parts.role, parts.status,
      h('span', { class: 'member-actions' }, parts.rename, parts.promote, parts.handOver, parts.kick));
    li.parts = parts;
    return li;
  }

  update(li, member) {
    const { parts } = li;
    parts.member = member;
    const snapshot = this.snapshot;
    const isMe = member.userId === snapshot.me;
    setText(parts.name, isMe ? `${member.displayName} (you)` : member.displayName);
    setText(parts.role, ROLE_NAMES[member.role] || '');
    parts.role.hidden = !ROLE_NAMES[member.role];
    setText(parts.status, member.connected ? ', connected' : ', away');
    li.classList.toggle('away', !member.connected);
    li.dataset.role = member.role;
    li.classList.toggle('mine', isMe);
    parts.rename.hidden = !isMe;
    // One row is the caller's: its button alone has the id.
    setAttr(parts.rename, 'id', isMe ? 'rename-button' : null);
    const canManage = snapshot.role === Role.host && !isMe;
    parts.promote.hidden = !canManage || member.role === Role.host;
    setText(parts.promote, member.role === Role.cohost ? 'Make member' : 'Make co-host');
    // The visible words first, so a voice-control user can say what they see.
    setAttr(parts.promote, 'aria-label', member.role === Role.cohost
      ? `Make member: take host controls away from ${member.displayName}` : `Make co-host: give ${member.displayName} host controls`);
    parts.handOver.hidden = !canManage || member.role === Role.host;
    setConfirmLabel(parts.handOver, `Make host: hand the session over to ${member.displayName}`);
    parts.kick.hidden = !canManage;
    setConfirmLabel(parts.kick, `Remove ${member.displayName} from the session`);
  }
}
