// The first screen: start a session or join one by code (a /j/CODE link fills the
// code in). Validation happens here, in words, before anything is sent.
import { Limits, normaliseJoinCode } from '../protocol.js';
import { checkDisplayName, checkSessionName, describeTextProblem } from '../text-limits.js';
import { h, setText } from './dom.js';

const WELCOME_HEADING = 'Listen together';
const WELCOME_LEAD = 'One shared queue, everybody votes, and every phone plays the same song at the same moment.';

export class WelcomeView {
  /**
   * @param {HTMLElement} root
   * @param {{onCreate: (o: {displayName: string, sessionName: string}) => void,
   *          onJoin: (o: {displayName: string, code: string}) => void}} actions
   */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
    this.heading = h('h1', { id: 'welcome-heading' }, WELCOME_HEADING);
    this.lead = h('p', { class: 'lead' }, WELCOME_LEAD);
    this.nameInput = h('input', {
      // No maxlength: it counts UTF-16 units and would cut a name the server takes (an emoji
      // is 2 to 11 of them); name() checks characters as the server counts them.
      id: 'display-name', name: 'displayName', type: 'text', autocomplete: 'nickname',
      required: true, placeholder: 'e.g. Alice',
      // The name sits outside both forms: Enter joins when a code is there (an invite link's),
      // else it goes on to the code.
      onkeydown: (event) => {
        // 229: the Enter that ends an input method's composition in some browsers.
        if (event.key !== 'Enter' || event.isComposing || event.keyCode === 229) return;
        event.preventDefault();
        // A held key repeats; a join or create under way is not asked for again.
        if (event.repeat || this.joinButton.disabled) return;
        if (this.codeInput.value.trim()) this.joinForm.requestSubmit();
        else this.codeInput.focus();
      },
    });
    this.error = h('p', { class: 'form-error', id: 'welcome-error', role: 'alert' });
    this.codeInput = h('input', {
      id: 'join-code', name: 'code', type: 'text', autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false',
      // No maxlength: a pasted code's spaces and dashes count there, though the server drops them.
      placeholder: 'K7MPQ2', 'aria-describedby': 'join-hint',
    });
    this.joinButton = h('button', { type: 'submit', class: 'primary', id: 'join-button' }, 'Join');
    this.sessionNameInput = h('input', {
      // No maxlength either: sessionName() checks it.
      id: 'session-name-input', name: 'sessionName', type: 'text',
      placeholder: 'Optional, e.g. Friday night',
    });
    this.createButton = h('button', { type: 'submit', class: 'primary', id: 'create-button' }, 'Start a session');

    this.joinForm = h('form', { class: 'card join-card', onsubmit: (e) => this.submitJoin(e), novalidate: true },
      h('h2', {}, 'Join a session'),
      h('label', { for: 'join-code' }, 'Join code'),
      h('div', { class: 'row' }, this.codeInput, this.joinButton),
      h('p', { class: 'hint', id: 'join-hint' }, 'Ask the host for the code, or open their invite link.'));
    this.createForm = h('form', { class: 'card create-card', onsubmit: (e) => this.submitCreate(e), novalidate: true },
      h('h2', {}, 'Start a session'),
      h('label', { for: 'session-name-input' }, 'Session name'),
      this.sessionNameInput,
      h('p', { class: 'hint' }, 'You will be the host: you can skip, pause, lock the queue and invite others.'),
      this.createButton);
    root.replaceChildren(
      this.heading, this.lead,
      h('div', { class: 'card name-card' },
        h('label', { for: 'display-name' }, 'Your name'),
        this.nameInput,
        h('p', { class: 'hint' }, 'Others see it next to the songs you add.')),
      this.error,
      h('div', { class: 'welcome-forms' }, this.joinForm, this.createForm));
  }

  /**
   * @param {{code?: string, name?: string, error?: string, busy?: boolean, fresh?: boolean}} state
   *   `fresh`: back from a session (left, removed, ended), so an earlier invite no longer stands
   */
  show({ code = '', name = '', error = '', busy = false, fresh = false } = {}) {
    if (name && !this.nameInput.value) this.nameInput.value = name;
    if (fresh) this.codeInput.value = '';
    if (code) this.codeInput.value = code;
    // An invite link's code not refused (yet) greets the person invited; a code just refused,
    // typed or a link's, is no invitation: the page says what went wrong and offers the field.
    const invited = !!code && !error;
    setText(this.heading, invited ? `You're invited to session ${code}` : WELCOME_HEADING);
    setText(this.lead, invited ? 'Enter your name and join: you can add songs, vote, and play along on this device.' : WELCOME_LEAD);
    this.joinForm.classList.toggle('invited', invited);
    this.setError(error);
    this.setBusy(busy);
    const focus = !this.nameInput.value ? this.nameInput : invited ? this.joinButton : this.codeInput;
    focus.focus({ preventScroll: true });
  }

  setBusy(busy) {
    this.joinButton.disabled = busy;
    this.createButton.disabled = busy;
    this.root.setAttribute('aria-busy', busy ? 'true' : 'false');
  }

  setError(message) {
    setText(this.error, message || '');
    this.error.hidden = !message;
  }

  name() {
    const check = checkDisplayName(this.nameInput.value);
    if (!check.problem) return check.value;
    this.setError(describeTextProblem(check, {
      subject: 'Your name', max: Limits.maxDisplayName, empty: 'Enter your name first, so others know who added what.',
    }));
    this.nameInput.focus();
    return null;
  }

  /** The trimmed session name ('' for the default), or null after saying what is wrong. */
  sessionName() {
    const check = checkSessionName(this.sessionNameInput.value);
    if (!check.problem) return check.value;
    this.setError(describeTextProblem(check, { subject: 'The session name', max: Limits.maxSessionName }));
    this.sessionNameInput.focus();
    return null;
  }

  submitJoin(event) {
    event.preventDefault();
    // requestSubmit() submits past a disabled button: busy means a join or create is under way.
    if (this.joinButton.disabled) return;
    const displayName = this.name();
    if (!displayName) return;
    const code = normaliseJoinCode(codeIn(this.codeInput.value));
    if (!code) {
      this.setError('Enter the join code the host gave you.');
      this.codeInput.focus();
      return;
    }
    this.setError('');
    this.actions.onJoin({ displayName, code });
  }

  submitCreate(event) {
    event.preventDefault();
    if (this.createButton.disabled) return;
    const displayName = this.name();
    if (!displayName) return;
    const sessionName = this.sessionName();
    if (sessionName === null) return;
    this.setError('');
    this.actions.onCreate({ displayName, sessionName });
  }
}

/**
 * The code in what was typed or pasted: a whole invite link (`http://host/j/K7MPQ2`, or its
 * path) gives the code after `/j/`; anything else is the code as typed.
 */
export function codeIn(text) {
  const link = /(?:^|\/)j\/([^/?#\s]+)\/?(?:[?#].*)?$/u.exec(String(text || '').trim());
  if (!link) return text;
  try {
    return decodeURIComponent(link[1]);
  } catch {
    return link[1];
  }
}
