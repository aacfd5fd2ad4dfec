// The host's sync column: every device that reports, a green, amber or red dot for its
// grade with its figures (clock error, playback error, output latency, delay), and per
// device a delay the host can set, "re-sync", and "calibrate" with that device listening.
// Fed by the server's syncStatus frames (at most one a second); shown to hosts and
// co-hosts only, since only they receive them.
import { DeviceLimits, SyncGrade, SyncTiming, readDeviceDelay } from '../protocol.js';
import { h, setAttr, setText, syncList } from './dom.js';
import { typedNumber } from './typed-number.js';

const GRADE_NAMES = { [SyncGrade.good]: 'in sync', [SyncGrade.fair]: 'slightly off', [SyncGrade.poor]: 'out of sync' };

/** "±0.8 ms clock · +1.5 ms playback · 40 ms output · 0 ms delay": what the row says of a device. */
export function describeDevice(device) {
  const parts = [`clock ±${round(device.clockErrorMs)} ms`, `playback ${signed(device.playbackErrorMs)} ms`];
  if (device.outputLatencyMs != null) parts.push(`output ${round(device.outputLatencyMs)} ms`);
  parts.push(`delay ${signed(device.delayMs || 0)} ms`);
  if (!device.playing) parts.push('not playing');
  // "Listen" as a calibration's listener does: through a microphone, not the speaker.
  if (device.canListen === false) parts.push('cannot listen (no microphone it may use)');
  if (device.ageMs > SyncTiming.staleMs) parts.push(`last heard ${Math.round(device.ageMs / 1000)} s ago`);
  return parts.join(' · ');
}

function round(value) {
  return Math.abs(value) >= 10 ? String(Math.round(value)) : String(Math.round(value * 10) / 10);
}

function signed(value) {
  return `${value >= 0 ? '+' : '−'}${round(Math.abs(value))}`;
}

export class SyncColumnView {
  /**
   * @param {{onDelay: (device: object, delayMs: number) => void, onResync: (device: object) => void,
   *   onCalibrate: (device: object) => void}} actions
   */
  constructor(actions) {
    this.actions = actions;
    this.list = h('ul', { class: 'sync-list', id: 'sync-list' });
    this.message = h('p', { class: 'sync-message', id: 'sync-message', role: 'status' });
    this.root = h('div', { class: 'sync-column', id: 'sync-column', hidden: true },
      h('h3', {}, 'Sync'), this.list, this.message);
    this.members = [];
  }

  /** Shows `update` (a syncStatus) with the members' names from `members`; hidden when nothing reports. */
  render(update, members) {
    this.members = members;
    const devices = update ? update.devices : [];
    this.root.hidden = devices.length === 0;
    syncList(this.list, devices, (d) => `${d.userId}/${d.deviceId || ''}`, (d) => this.create(d), (li, d) => this.update(li, d));
  }

  /** A line under the column: a calibration's progress or result. */
  say(text) {
    setText(this.message, text || '');
  }

  create() {
    const parts = {
      dot: h('span', { class: 'sync-dot', 'aria-hidden': 'true' }),
      name: h('span', { class: 'sync-name' }),
      grade: h('span', { class: 'visually-hidden sync-grade' }),
      figures: h('span', { class: 'sync-figures muted' }),
      delay: h('input', { type: 'number', class: 'sync-delay', step: 1, min: -DeviceLimits.maxDelayMs, max: DeviceLimits.maxDelayMs }),
      resync: h('button', { type: 'button', class: 'quiet small sync-resync' }, 'Re-sync'),
      calibrate: h('button', { type: 'button', class: 'quiet small sync-calibrate' }, 'Calibrate, this one listening'),
    };
    parts.delay.addEventListener('change', () => {
      typedNumber(parts.delay, readDeviceDelay, (read) => this.actions.onDelay(parts.device, read.delayMs));
    });
    parts.resync.addEventListener('click', () => this.actions.onResync(parts.device));
    parts.calibrate.addEventListener('click', () => this.actions.onCalibrate(parts.device));
    const li = h('li', { class: 'sync-device' }, parts.dot, parts.name, parts.grade, parts.figures,
      h('span', { class: 'sync-actions' }, h('label', {}, 'delay ', parts.delay, ' ms'), parts.resync, parts.calibrate));
    li.parts = parts;
    return li;
  }

  update(li, device) {
    const { parts } = li;
    parts.device = device;
    const member = this.members.find((m) => m.userId === device.userId);
    const name = member ? member.displayName : 'someone who left';
    setText(parts.name, `${name} · ${device.deviceId || 'no device id'}`);
    setText(parts.grade, `, ${GRADE_NAMES[device.grade] || device.grade}`);
    setText(parts.figures, describeDevice(device));
    li.dataset.grade = device.grade;
    li.dataset.userId = device.userId;
    li.dataset.deviceId = device.deviceId || '';
    if (document.activeElement !== parts.delay) parts.delay.value = String(device.delayMs || 0);
    const named = !!device.deviceId;
    parts.delay.disabled = !named;
    // A device that said it cannot record would only time the run out.
    parts.calibrate.hidden = !named || !device.playing || device.canListen === false;
    setAttr(parts.resync, 'aria-label', `Ask ${name}'s device to re-sync`);
    setAttr(parts.calibrate, 'aria-label', `Calibrate the room with ${name}'s device listening (its microphone is asked for)`);
    setAttr(parts.delay, 'aria-label', `Delay of ${name}'s device in milliseconds`);
  }
}
