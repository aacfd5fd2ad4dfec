// This device's delay: how much later than its reported latency it is heard (a
// Bluetooth speaker that under-reports, say). The member sets it here; the server keeps
// it per member and device, so the figure shown is always the one coming back.
import { DeviceLimits, readDeviceDelay } from '../protocol.js';
import { typedNumber } from './typed-number.js';
import { h, setText } from './dom.js';

const STEP_MS = 5;

export class DeviceDelayView {
  /** @param {(delayMs: number) => Promise<any>|void} onSet sends the new delay; its promise settles with the answer */
  constructor(onSet) {
    this.onSet = onSet;
    this.value = 0;
    /** The last delay sent and not yet shown back by the server: quick presses step from it. */
    this.pending = null;
    this.input = h('input', {
      type: 'number', id: 'device-delay', step: 1, min: -DeviceLimits.maxDelayMs, max: DeviceLimits.maxDelayMs, value: 0,
      'aria-label': 'Delay of this device in milliseconds',
      onchange: () => typedNumber(this.input, readDeviceDelay, (read) => this.send(read.delayMs)),
    });
    this.shown = h('span', { id: 'device-delay-shown', class: 'muted' }, 'no delay');
    this.root = h('div', { class: 'device-delay', id: 'device-delay-row' },
      h('span', {}, 'Delay '),
      h('button', { type: 'button', class: 'quiet small', id: 'device-delay-less', 'aria-label': `${STEP_MS} ms less delay`,
        onclick: () => this.step(-STEP_MS) }, '−'),
      this.input,
      h('button', { type: 'button', class: 'quiet small', id: 'device-delay-more', 'aria-label': `${STEP_MS} ms more delay`,
        onclick: () => this.step(STEP_MS) }, '+'),
      h('span', {}, ' ms '), this.shown);
  }

  /** A press of − or +: from the delay last sent, so three quick presses are three steps; the buttons stop at the limits. */
  step(deltaMs) {
    const from = this.pending ?? this.value;
    const next = Math.max(-DeviceLimits.maxDelayMs, Math.min(DeviceLimits.maxDelayMs, from + deltaMs));
    if (next === from) return;
    this.send(next);
  }

  send(delayMs) {
    this.pending = delayMs;
    const answer = this.onSet(delayMs);
    // Answered (the server's figure, perhaps rounded, is shown by then) or refused: the next
    // press steps from what the server holds, unless a later press is still on its way.
    const settle = () => { if (this.pending === delayMs) this.pending = null; };
    if (answer && typeof answer.then === 'function') answer.then(settle, settle);
  }

  /** Shows the delay the server holds for this device. */
  render(delayMs) {
    this.value = delayMs;
    if (document.activeElement !== this.input) this.input.value = String(delayMs);
    setText(this.shown, delayMs === 0 ? 'no delay' : delayMs > 0 ? `starts ${delayMs} ms early` : `starts ${-delayMs} ms late`);
  }
}
