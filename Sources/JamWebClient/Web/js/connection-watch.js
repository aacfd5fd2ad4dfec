// When a socket that still looks open counts as dead, so the page drops it and reconnects:
// a browser notices a dead TCP path only when TCP gives up, many minutes later. JamClient's
// ConnectionWatch is the same rule; the shared fixture connection-watch.json keeps them alike.

/** The limits, ms (ConnectionWatch's defaults). */
export const ConnectionWatch = Object.freeze({
  /** A socket the server has not answered on yet is given up this long after it opened. */
  openLimitMs: 10_000,
  /** An answered socket is dead once its oldest ping has waited this long for its pong and nothing came for as long. */
  silenceLimitMs: 6_000,
  /** How often the page looks. */
  checkEveryMs: 2_000,
});

/**
 * Whether to drop the socket now. A quiet session sends nothing, so silence alone is no sign;
 * a ping the server does not answer is.
 * @param {{answered: boolean, sinceOpenedMs: number, oldestUnansweredPingMs: number|null, sinceHeardMs: number}} look
 * @param {{openLimitMs: number, silenceLimitMs: number}} [watch]
 * @returns {boolean}
 */
export function isDead({ answered, sinceOpenedMs, oldestUnansweredPingMs, sinceHeardMs }, watch = ConnectionWatch) {
  if (!answered) return sinceOpenedMs > watch.openLimitMs;
  if (oldestUnansweredPingMs == null) return false;
  return oldestUnansweredPingMs > watch.silenceLimitMs && sinceHeardMs > watch.silenceLimitMs;
}
