// Messages for the person: errors in words (with a dismiss button) and short
// confirmations. Errors stay until dismissed or replaced; confirmations fade. Each notice is
// its own live region (alert or status), so the container is none: nested, a screen reader
// could read a notice twice.
import { h } from './dom.js';

const MAX_NOTICES = 3;

export class Notices {
  constructor(root) {
    this.root = root;
    // The notices sit fixed over the bottom of the page: the page gets as much room below
    // its end, so whatever they cover can be scrolled above them.
    if (globalThis.ResizeObserver) {
      new ResizeObserver(() => {
        const height = root.children.length ? root.getBoundingClientRect().height : 0;
        document.body.style.setProperty('--notices-height', `${Math.ceil(height)}px`);
      }).observe(root);
    }
  }

  /** @param {string} message @param {'error'|'info'} [kind] */
  show(message, kind = 'error') {
    for (const existing of this.root.children) {
      if (existing.dataset.message === message) existing.remove();
    }
    const close = h('button', { type: 'button', class: 'notice-close', 'aria-label': 'Dismiss' }, '×');
    const notice = h('div', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status', dataset: { message } },
      h('p', {}, message), close);
    close.addEventListener('click', () => notice.remove());
    // column-reverse: the newest shows at the bottom, nearest the thumb.
    this.root.prepend(notice);
    while (this.root.children.length > MAX_NOTICES) this.root.lastElementChild.remove();
    if (kind !== 'error') setTimeout(() => notice.remove(), 5_000);
    return notice;
  }
}
