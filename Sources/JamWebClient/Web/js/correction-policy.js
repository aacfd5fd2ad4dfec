// The drift correction policy: what to do about a measured playback error (player
// position − timeline position, ms; positive = ahead). Errors inside the dead band are
// left alone; a correction under way goes on until the error is inside the tighter
// target band; small errors are removed by a temporary rate change within
// ±maxRateDeviation, sized to clear the error by a deadline; errors too large for the
// rate to fix without being heard get a fresh cued start. Pure: the sync engine
// measures and applies.

/**
 * @param {number} error ms
 * @param {{rate: number, deadline: number|null, now: number}} state the rate the player
 *   runs at, the deadline of the correction under way (null when none), the local instant
 * @param {typeof import('./sync-config.js').DEFAULT_SYNC_CONFIG} config
 * @returns {{kind: 'restart'} | {kind: 'inBand'} | {kind: 'steer', deadline: number, rate: number|null}}
 *   restart: start the course afresh; inBand: rate 1, no correction under way; steer:
 *   keep correcting until `deadline`, at `rate` (null when the change is too small to send)
 */
export function correctionStep(error, { rate, deadline, now }, config) {
  if (Math.abs(error) >= config.seekThresholdMs) return { kind: 'restart' };
  const band = deadline == null ? config.deadBandMs : config.targetBandMs;
  if (Math.abs(error) <= band) return { kind: 'inBand' };
  let until = deadline ?? now + config.correctionHorizonMs;
  if (until - now < config.correctionIntervalMs / 2) until = now + config.correctionHorizonMs;
  const remaining = Math.max(until - now, config.correctionIntervalMs);
  const limit = config.maxRateDeviation;
  const wanted = Math.min(1 + limit, Math.max(1 - limit, 1 - error / remaining));
  return { kind: 'steer', deadline: until, rate: Math.abs(wanted - rate) >= config.minRateStep ? wanted : null };
}
