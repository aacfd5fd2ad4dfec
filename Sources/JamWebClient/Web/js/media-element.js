// Waiting on one <audio> element: until it can play without stalling, and until a
// seek has landed.

export const READY_STATE_FUTURE = 3; // HTMLMediaElement.HAVE_FUTURE_DATA

/** Resolves once the element can play; `register` receives a function that abandons the wait. */
export function waitForReady(el, track, register) {
  return new Promise((resolve, reject) => {
    const done = (fn, value) => {
      el.removeEventListener('canplay', onReady);
      el.removeEventListener('error', onError);
      clearTimeout(timer);
      register(null);
      fn(value);
    };
    register(() => done(reject, new Error(`"${track.name}": replaced before it loaded`)));
    const onReady = () => done(resolve);
    const onError = () => {
      const code = el.error ? el.error.code : 0;
      const why = code === 4 ? 'the audio format is not supported by this browser' : 'the audio could not be loaded';
      done(reject, new Error(`"${track.name}": ${why}`));
    };
    const timer = setTimeout(() => done(reject, new Error(`"${track.name}": loading took too long`)), 20_000);
    if (el.readyState >= READY_STATE_FUTURE) {
      done(resolve);
      return;
    }
    el.addEventListener('canplay', onReady);
    el.addEventListener('error', onError);
  });
}

/** Moves the element to positionMs; resolves when the seek has landed (or after 3 s). */
export function seekTo(el, positionMs) {
  return new Promise((resolve) => {
    const target = positionMs / 1000;
    if (Math.abs(el.currentTime - target) < 0.0005 && !el.seeking) {
      resolve();
      return;
    }
    const done = () => {
      el.removeEventListener('seeked', done);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, 3_000);
    el.addEventListener('seeked', done);
    el.currentTime = target;
  });
}

/**
 * Calls `fn` whenever `el` pauses before its end (a song played to its end fires a pause
 * too, and is no pause of anybody's).
 */
export function watchPause(el, fn) {
  el.addEventListener('pause', () => {
    if (!el.ended) fn();
  });
}
