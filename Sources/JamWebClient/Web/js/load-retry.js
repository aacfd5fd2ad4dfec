// When a device tries again to load the item it could not load (JamClient's LoadRetry):
// loadRetryBaseMs after the first failure, doubling with each failure in a row up to
// loadRetryCapMs, for as long as the item stays current. A phone whose network dropped for a
// moment then joins the song mid-way instead of staying silent until the next one.

/** The wait after `failures` failed loads in a row, in ms. */
export function loadRetryDelayMs(failures, config) {
  const doublings = Math.min(Math.max(failures - 1, 0), 20);
  return Math.min(config.loadRetryCapMs, config.loadRetryBaseMs * 2 ** doublings);
}

/**
 * The retry after a load of `epoch`'s item failed at local instant `now`, counting on from
 * `previous` when that was the same item's.
 * @returns {{epoch: number, failures: number, dueAt: number}}
 */
export function loadRetryAfter(previous, epoch, now, config) {
  const failures = (previous && previous.epoch === epoch ? previous.failures : 0) + 1;
  return { epoch, failures, dueAt: now + loadRetryDelayMs(failures, config) };
}
