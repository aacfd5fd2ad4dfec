// A few DOM helpers: the page is built with createElement (the CSP forbids inline
// markup tricks anyway) and lists are updated in place by key, so a re-render never
// steals focus from the button a keyboard user is on.

/**
 * Creates an element. props: class, text, on<event> handlers, dataset, boolean
 * attributes (true sets, false/null omits) and plain attributes.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value == null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** The page's element with this id (the static parts of index.html). */
export function byId(id) {
  return document.getElementById(id);
}

/** Sets text only when it changed (keeps screen readers and selection calm). */
export function setText(el, text) {
  const value = text == null ? '' : String(text);
  if (el.textContent !== value) el.textContent = value;
}

/** Sets or removes an attribute. */
export function setAttr(el, name, value) {
  if (value == null || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else {
    const text = value === true ? '' : String(value);
    if (el.getAttribute(name) !== text) el.setAttribute(name, text);
  }
}

/**
 * Makes container's children match items, reusing elements by key:
 * create(item) builds one, update(el, item, index) refreshes it.
 */
export function syncList(container, items, keyOf, create, update) {
  // Moving an element (a song voted up) takes focus off whatever inside it had it.
  const focused = container.contains(document.activeElement) ? document.activeElement : null;
  const existing = new Map();
  for (const child of container.children) existing.set(child.dataset.key, child);
  let cursor = container.firstElementChild;
  items.forEach((item, index) => {
    const key = String(keyOf(item));
    let el = existing.get(key);
    if (el) existing.delete(key);
    else {
      el = create(item);
      el.dataset.key = key;
    }
    update(el, item, index);
    if (el !== cursor) container.insertBefore(el, cursor);
    else cursor = cursor.nextElementSibling;
  });
  for (const el of existing.values()) el.remove();
  if (focused && focused.isConnected && document.activeElement !== focused) focused.focus({ preventScroll: true });
}

/** Stops a press of a button waiting for its answer before the button's own handler sees it. */
function ignoreWhileBusy(event) {
  event.preventDefault();
  event.stopImmediatePropagation();
}

/**
 * Holds `button` unpressable (and busy for screen readers) until `answer` (the command's
 * promise) settles, so a second press cannot send the same command again on a state the first
 * has already changed (a double-click on Pause would be refused as "already paused").
 * aria-disabled rather than disabled: a disabled button loses the keyboard's focus, and the
 * person who pressed Pause would have to find Resume again.
 */
export function untilAnswered(button, answer) {
  if (!answer || typeof answer.then !== 'function') return;
  setAttr(button, 'aria-disabled', 'true');
  setAttr(button, 'aria-busy', 'true');
  // Capture on the button itself runs before the handlers it already has.
  button.addEventListener('click', ignoreWhileBusy, true);
  const release = () => {
    button.removeEventListener('click', ignoreWhileBusy, true);
    setAttr(button, 'aria-disabled', null);
    setAttr(button, 'aria-busy', null);
  };
  answer.then(release, release);
}

/**
 * A button that asks for a second press before a destructive action, instead of a
 * blocking confirm() dialog. Give it a fuller accessible name with `setConfirmLabel`.
 */
export function confirmButton(label, confirmLabel, action, props = {}) {
  const button = h('button', { type: 'button', ...props, text: label });
  askBefore(button, label, () => confirmLabel, action);
  return button;
}

/**
 * Calls `action` when a toggle is pressed, but not for the second click of a double-click on
 * it (`detail` 2 and up, within CONFIRM_MIN_GAP_MS of its last press): people double-click
 * buttons out of habit, and on a toggle the second click would take back the first at once
 * (a vote withdrawn, playing on this device stopped). The click count is the platform's,
 * not the button's, so a quick press on another toggle still counts. A second press later,
 * or by key, toggles back as asked.
 */
export function onToggle(button, action) {
  let pressedAt = -Infinity;
  button.addEventListener('click', (event) => {
    const now = performance.now();
    if (event.detail > 1 && now - pressedAt < CONFIRM_MIN_GAP_MS) return;
    pressedAt = now;
    action(event);
  });
}

/**
 * A pointer press sooner than this after a button asked is the second half of a double-click
 * or double-tap, not an answer: without the gap, a double-clicked Remove would ban a member
 * without ever asking. (A key press, whose click has `detail` 0, is always deliberate.)
 */
export const CONFIRM_MIN_GAP_MS = 500;

/**
 * Makes an existing button ask `question()` (its text until pressed again, for 4 s) before
 * `action`, as confirmButton does; when `question()` is null, a press acts at once.
 */
export function askBefore(button, label, question, action) {
  let armed = null;
  let askedAt = 0;
  const disarm = () => {
    clearTimeout(armed);
    armed = null;
    button.textContent = label;
    button.classList.remove('armed');
    nameConfirmButton(button);
  };
  button.addEventListener('click', (event) => {
    if (armed && event.detail > 0 && performance.now() - askedAt < CONFIRM_MIN_GAP_MS) return;
    const asked = armed ? null : question();
    if (!asked) {
      disarm();
      action();
      return;
    }
    button.dataset.confirm = asked;
    button.textContent = asked;
    button.classList.add('armed');
    nameConfirmButton(button);
    askedAt = performance.now();
    armed = setTimeout(disarm, 4_000);
  });
  button.addEventListener('blur', () => setTimeout(() => { if (armed && document.activeElement !== button) disarm(); }, 0));
}

/**
 * Sets a confirm button's accessible name ("Remove Song 2 from the queue"). While it waits
 * for the second press the name starts with its question, so a screen reader says what
 * changed (an aria-label would otherwise hide the new text).
 */
export function setConfirmLabel(button, text) {
  button.dataset.label = text;
  nameConfirmButton(button);
}

function nameConfirmButton(button) {
  const label = button.dataset.label;
  if (!label) return;
  setAttr(button, 'aria-label', button.classList.contains('armed') ? `${button.dataset.confirm} ${label}` : label);
}

/**
 * Where a person's own press in `list` holds focus before a render: `pressed` (the button
 * they pressed) and the index of its row, or null when focus has left that button (another
 * member's change must not move their focus).
 */
export function heldFocus(list, pressed) {
  if (!pressed || pressed !== document.activeElement) return null;
  return { pressed, place: [...list.children].indexOf(pressed.closest('li')) };
}

/**
 * After the render: if the pressed button went away with its row, focus would fall to the
 * page's start, so it goes to `sameButton(row)` of the row now in its place (the one before,
 * for the last), else to that row's first usable button, else to `fallback`. True when the
 * press is dealt with.
 */
export function refocusInPlace(list, held, sameButton, fallback) {
  if (held.pressed.isConnected) return false;
  const row = list.children[held.place] || list.children[held.place - 1];
  const usable = (button) => button && !button.disabled && button.offsetParent !== null;
  const next = row && [sameButton(row), ...row.querySelectorAll('button')].find(usable);
  (next || fallback).focus({ preventScroll: true });
  return true;
}
