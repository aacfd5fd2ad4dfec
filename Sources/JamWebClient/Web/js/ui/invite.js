// The invite panel: the join code, the link (with a copy button that works without
// the Clipboard API, which plain-http LAN servers do not get) and its QR code, drawn
// by the server so nothing is fetched from elsewhere.
import { Role, joinPath } from '../protocol.js';
import { h, setText, untilAnswered } from './dom.js';

export function inviteLink(code) {
  return `${location.origin}${joinPath(code)}`;
}

/**
 * Whether a page address names this computer itself (127.0.0.1, localhost, ::1), which no
 * phone or other computer can open: the terminal's `Invite.linksOnlyHere`, for the same note.
 */
export function linksOnlyHere(hostname) {
  const host = String(hostname).toLowerCase();
  return host === 'localhost' || host.startsWith('127.') || host === '::1' || host === '[::1]';
}

export class InviteView {
  /** @param {HTMLElement} root @param {{onNewCode: () => Promise<void>}} actions */
  constructor(root, actions) {
    this.root = root;
    this.code = h('p', { class: 'invite-code', id: 'invite-code' });
    this.link = h('input', { type: 'text', readonly: true, id: 'invite-link', 'aria-label': 'Invite link' });
    this.copy = h('button', { type: 'button', id: 'invite-copy', onclick: () => this.copyLink() }, 'Copy link');
    this.copied = h('span', { class: 'hint', role: 'status' });
    this.qr = h('img', { class: 'qr', id: 'invite-qr', width: 232, height: 232, alt: '' });
    // The server prints its loopback address by default: a link on it reaches nobody else.
    this.onlyHere = h('p', { class: 'hint', id: 'invite-only-here', hidden: !linksOnlyHere(location.hostname) },
      'Only this computer opens this link. For phones and other computers, start the server with --host 0.0.0.0 '
      + 'and open this page by this computer\'s network address.');
    // Busy until answered: a second press would make a second code, and the first one shown dead.
    this.newCode = h('button', {
      type: 'button', class: 'quiet', id: 'invite-new-code', onclick: () => untilAnswered(this.newCode, actions.onNewCode()), hidden: true,
    }, 'Make a new code');
    root.replaceChildren(
      h('h2', { id: 'invite-heading' }, 'Invite friends'),
      h('div', { class: 'invite-body' },
        h('div', { class: 'invite-text' },
          h('p', {}, 'Share the link, let them scan the code, or tell them the join code:'),
          this.code,
          h('div', { class: 'row' }, this.link, this.copy),
          this.onlyHere,
          this.copied,
          this.newCode),
        this.qr));
    this.current = null;
  }

  render(snapshot) {
    const session = snapshot.session;
    if (!session) return;
    this.newCode.hidden = snapshot.role !== Role.host;
    if (this.current === session.joinCode) return;
    this.current = session.joinCode;
    const link = inviteLink(session.joinCode);
    setText(this.code, session.joinCode);
    this.link.value = link;
    this.qr.src = `/api/v1/qr.svg?text=${encodeURIComponent(link)}`;
    this.qr.alt = `QR code for ${link}`;
  }

  async copyLink() {
    let ok = false;
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(this.link.value);
        ok = true;
      } catch {
        ok = false;
      }
    }
    if (!ok) {
      this.link.focus();
      this.link.select();
      try {
        ok = document.execCommand('copy');
      } catch {
        ok = false;
      }
    }
    setText(this.copied, ok ? 'Link copied.' : 'Select the link and copy it.');
    clearTimeout(this.copiedTimer);
    this.copiedTimer = setTimeout(() => setText(this.copied, ''), 4_000);
  }
}
