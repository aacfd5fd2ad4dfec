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
  /** An answered socket nothing came on for this long is sent a ping of its own. */
  quietProbeMs: 15_000,
  /** A command that has waited this long, on a socket nothing came on for as long, sends that ping sooner. */
  commandProbeMs: 2_000,
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

/**
 * Whether to send a ping now to learn whether the socket is alive: it is answered, no ping
 * already waits (its pong or its silence will tell), and nothing came for quietProbeMs, or for
 * commandProbeMs while a command has waited as long. isDead then judges the ping.
 * @param {{answered: boolean, oldestUnansweredPingMs: number|null, oldestWaitingCommandMs: number|null, sinceHeardMs: number}} look
 * @param {{quietProbeMs: number, commandProbeMs: number}} [watch]
 * @returns {boolean}
 */
export function shouldProbe({ answered, oldestUnansweredPingMs, oldestWaitingCommandMs, sinceHeardMs }, watch = ConnectionWatch) {
  if (!answered || oldestUnansweredPingMs != null) return false;
  if (sinceHeardMs > watch.quietProbeMs) return true;
  if (oldestWaitingCommandMs == null) return false;
  return oldestWaitingCommandMs > watch.commandProbeMs && sinceHeardMs > watch.commandProbeMs;
}
