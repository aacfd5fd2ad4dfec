// The session page's device sync: this device's delay, the host's sync column, re-syncs
// and room calibration, wired to the store (passing frames and commands), the engine
// (its latency and delay) and the player (its AudioContext). SessionPage attaches it
// to each session it shows.
import { CalibrationRunner, canRecordRoom } from './calibration.js';
import { deviceId } from './device.js';
import { Command, Event, hasHostControls } from './protocol.js';
import { byId } from './ui/dom.js';
import { DeviceDelayView } from './ui/device-delay.js';
import { SyncColumnView } from './ui/sync-column.js';

export class DeviceSyncPanel {
  /**
   * @param {{player: import('./player.js').AudioPlayer, notices: import('./ui/notices.js').Notices}} options
   */
  constructor({ player, notices }) {
    this.player = player;
    this.notices = notices;
    this.deviceId = deviceId();
    this.store = null;
    this.engine = null;
    this.clock = null;
    this.board = null;
    this.unsubscribe = null;
    this.delay = new DeviceDelayView((delayMs) => this.setDelay(null, this.deviceId, delayMs));
    this.column = new SyncColumnView({
      onDelay: (device, delayMs) => this.setDelay(device.userId, device.deviceId, delayMs),
      onResync: (device) => this.perform(Command.resync, { userId: device.userId, deviceId: device.deviceId }, 'resync'),
      onCalibrate: (device) => this.calibrate(device),
    });
    byId('now-playing').append(this.delay.root);
    byId('members').append(this.column.root);
    this.calibration = new CalibrationRunner({
      device: () => ({ userId: this.store ? this.store.me : '', deviceId: this.deviceId }),
      clock: () => this.clock,
      audio: () => this.player.audioContext,
      compensationMs: () => (this.engine ? this.engine.compensationMs() : 0),
      send: (type, data) => (this.store ? this.store.connection.send(type, data) : Promise.reject(new Error('not in a session'))),
      onStatus: (text) => this.column.say(text),
    });
  }

  /** This device, as the engine and the server name it. */
  device(me) {
    return { userId: me, deviceId: this.deviceId };
  }

  /** Follows a newly shown session. */
  attach(store, engine, clock) {
    this.detach();
    this.store = store;
    this.engine = engine;
    this.clock = clock;
    this.board = null;
    this.column.say('');
    this.unsubscribe = store.onPassing((envelope) => this.passing(envelope));
  }

  detach() {
    // A calibration of the session left behind must not go on playing or listening here.
    this.calibration.abort();
    if (this.unsubscribe) this.unsubscribe();
    this.unsubscribe = null;
    this.store = null;
    this.engine = null;
    this.clock = null;
  }

  /** Shows the store's latest state: this device's delay, and the column for hosts. */
  render(snapshot) {
    const view = this.store ? this.store.mirror.view : null;
    const mine = view && (view.deviceDelays || []).find((d) => d.userId === snapshot.me && d.deviceId === this.deviceId);
    this.delay.render(mine ? mine.delayMs : 0);
    if (!hasHostControls(snapshot.role)) this.board = null;
    this.column.render(this.board, snapshot.members);
  }

  passing(envelope) {
    switch (envelope.type) {
      case Event.syncStatus:
        this.board = envelope.data;
        if (this.store) this.column.render(this.board, this.store.snapshot().members);
        break;
      case Event.resync:
        if (this.engine) this.engine.handle(envelope);
        break;
      case Event.calibration:
        this.column.say('Calibrating: every playing device chirps in turn; keep the room quiet…');
        this.calibration.handle(envelope.data).catch((error) => this.column.say(`Calibration failed on this device: ${error.message || error}`));
        break;
      case Event.calibrationResult: {
        const outcome = envelope.data;
        const text = `${outcome.ok ? 'Calibration done' : 'Calibration failed'}: ${outcome.message}`;
        this.column.say(text);
        this.notices.show(text, outcome.ok ? 'info' : undefined);
        break;
      }
      default:
        break;
    }
  }

  setDelay(userId, device, delayMs) {
    const data = { deviceId: device, delayMs };
    if (userId && (!this.store || userId !== this.store.me)) data.userId = userId;
    return this.perform(Command.setDeviceDelay, data, 'delay');
  }

  /**
   * Starts a calibration with `device` listening. This device's own microphone is asked for
   * first, from the click (a gesture), and the run starts only once it is allowed: a prompt
   * answered after the first chirp would miss it and fail the run.
   */
  async calibrate(device) {
    if (device.userId === (this.store && this.store.me) && device.deviceId === this.deviceId) {
      // Without a microphone the run would chirp the whole room for nothing.
      if (!canRecordRoom()) {
        this.column.say('Calibration: this page may not use a microphone: open OpenJam over https (or on localhost) to listen with this device.');
        return null;
      }
      try {
        const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
        stream.getTracks().forEach((t) => t.stop());
      } catch (error) {
        this.column.say(`Calibration: the microphone is not available (${error && error.message ? error.message : error}).`);
        return null;
      }
    }
    return this.perform(Command.calibrate, { userId: device.userId, deviceId: device.deviceId }, 'calibrate');
  }

  /** Sends a command through the session's store; resolves once it is answered (or refused). */
  perform(type, data, action) {
    return this.store ? this.store.perform(type, data, action) : Promise.resolve(null);
  }
}
