/// When a device tries again to load the item it could not load: `loadRetryBaseMs` after the
/// first failure, doubling with each failure in a row up to `loadRetryCapMs`, for as long as the
/// item stays current. A phone whose network dropped for a moment then joins the song mid-way
/// instead of staying silent until the next one. The web engine's `nextLoadRetry` is the same rule.
struct LoadRetry: Equatable, Sendable {
    /// The epoch of the item that failed to load.
    var epoch: Int64
    /// Failed loads of that item in a row.
    var failures: Int
    /// The local instant (ms) the next try is due.
    var dueAt: Double

    /// Whether the next try is due at local instant `now`.
    func isDue(now: Double) -> Bool { now >= dueAt }

    /// The wait after `failures` failed loads in a row, ms.
    static func delayMs(afterFailures failures: Int, configuration: SyncEngine.Configuration) -> Double {
        min(configuration.loadRetryCapMs, configuration.loadRetryBaseMs * Double(1 << min(max(failures - 1, 0), 20)))
    }

    /// The retry after a load of `epoch`'s item failed at `now`, counting on from `previous`
    /// when that was the same item's.
    static func after(
        _ previous: LoadRetry?, failedEpoch epoch: Int64, now: Double, configuration: SyncEngine.Configuration
    ) -> LoadRetry {
        let failures = (previous?.epoch == epoch ? previous?.failures ?? 0 : 0) + 1
        return LoadRetry(epoch: epoch, failures: failures, dueAt: now + delayMs(afterFailures: failures, configuration: configuration))
    }
}
