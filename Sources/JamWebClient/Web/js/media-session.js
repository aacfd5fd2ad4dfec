// The lock screen's, notification's and headphones' play and pause buttons (the Media
// Session API): they act as "Play on this device" and "Stop playing here". Without
// handlers the browser would pause or play the <audio> element itself, and a play from
// the lock screen would then sound wherever the song had been paused, out of sync.

const ACTIONS = ['play', 'pause', 'stop'];

export class MediaSessionControls {
  /**
   * @param {object} actions
   * @param {() => void} actions.onPlay the device should play along
   * @param {() => void} actions.onStop the device should stop playing
   */
  constructor({ onPlay, onStop }) {
    this.session = globalThis.navigator && navigator.mediaSession ? navigator.mediaSession : null;
    this.onPlay = onPlay;
    this.onStop = onStop;
    this.shown = null;
  }

  /** Takes over the buttons (while a session is shown). */
  attach() {
    for (const action of ACTIONS) this.handle(action, action === 'play' ? () => this.onPlay() : () => this.onStop());
  }

  /** Gives the buttons back to the browser. */
  detach() {
    for (const action of ACTIONS) this.handle(action, null);
    this.show(null, false);
  }

  /**
   * Names the song on the lock screen, and says whether this device plays it.
   * @param {{name: string, artist?: string|null, album?: string|null}|null} track
   */
  show(track, playing) {
    if (!this.session) return;
    const key = track ? `${track.name}\u0000${track.artist || ''}\u0000${track.album || ''}` : null;
    if (key !== this.shown) {
      this.shown = key;
      const Metadata = globalThis.MediaMetadata;
      this.session.metadata = track && Metadata ? new Metadata({ title: track.name, artist: track.artist || '', album: track.album || '' }) : null;
    }
    this.session.playbackState = track ? (playing ? 'playing' : 'paused') : 'none';
  }

  handle(action, fn) {
    if (!this.session) return;
    try {
      this.session.setActionHandler(action, fn);
    } catch {
      // An action this browser does not know: its button is not shown.
    }
  }
}
