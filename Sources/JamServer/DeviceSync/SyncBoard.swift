import JamCore
import JamProtocol

/// Every device's latest `syncReport` in one session, and when hosts next see them.
///
/// Reports are passing measurements, not session history: they live in memory on the
/// node the device is connected to and are never logged. A value that takes inputs and
/// returns decisions; `SyncBoardTests` drive it with plain instants.
struct SyncBoard: Sendable {
    struct Entry: Sendable, Equatable {
        var user: UserID
        var report: SyncReport
        var receivedAt: Millis
    }

    /// What to do about publishing after an input.
    enum Publish: Sendable, Equatable {
        /// Send `syncStatus` to hosts now.
        case now
        /// Wait until this instant (a report came in within the last second).
        case at(Millis)
        /// Nothing new.
        case none
    }

    /// Hosts see the board at most this often.
    static let publishIntervalMs: Millis = 1_000
    /// A device silent for this long leaves the board.
    static let forgetAfterMs: Millis = 120_000

    private(set) var entries: [DeviceKey: Entry] = [:]
    private var lastPublishedAt: Millis?
    private var changed = false

    /// A device is its member and id; a report without a device id stands for the member.
    struct DeviceKey: Hashable, Sendable, Comparable {
        var user: UserID
        var deviceId: String

        static func < (a: DeviceKey, b: DeviceKey) -> Bool { (a.user.rawValue, a.deviceId) < (b.user.rawValue, b.deviceId) }
    }

    /// Takes a report and says when hosts should see it. A member's new device beyond
    /// `SessionState.deviceDelaysPerMember` takes the place of the one they heard from
    /// longest ago: a member inventing device ids would otherwise fill every host's column
    /// and crowd real devices out of calibrations.
    mutating func record(_ report: SyncReport, from user: UserID, at now: Millis) -> Publish {
        let key = DeviceKey(user: user, deviceId: report.deviceId ?? "")
        entries = entries.filter { now - $0.value.receivedAt < Self.forgetAfterMs }
        if entries[key] == nil {
            let theirs = entries.filter { $0.key.user == user }
            if theirs.count >= SessionState.deviceDelaysPerMember, let oldest = theirs.min(by: { $0.value.receivedAt < $1.value.receivedAt }) {
                entries[oldest.key] = nil
            }
        }
        entries[key] = Entry(user: user, report: report, receivedAt: now)
        changed = true
        return due(at: now)
    }

    /// Forgets a member's devices (they left or were removed).
    mutating func forget(_ user: UserID) {
        let before = entries.count
        entries = entries.filter { $0.key.user != user }
        if entries.count != before { changed = true }
    }

    /// Whether a publish is due at `now`.
    func due(at now: Millis) -> Publish {
        guard changed else { return .none }
        guard let last = lastPublishedAt, now - last < Self.publishIntervalMs else { return .now }
        return .at(last + Self.publishIntervalMs)
    }

    /// The board as hosts see it, marking it published.
    mutating func publish(at now: Millis) -> SyncStatusUpdate {
        lastPublishedAt = now
        changed = false
        return status(at: now)
    }

    /// The board as hosts see it, members and devices in a stable order.
    func status(at now: Millis) -> SyncStatusUpdate {
        let devices = entries.sorted { $0.key < $1.key }.map { key, entry in
            let report = entry.report
            let age = Double(max(0, now - entry.receivedAt))
            return DeviceSyncStatus(
                userId: entry.user, deviceId: report.deviceId, clockErrorMs: report.errorMs, playbackErrorMs: report.driftMs,
                clockDriftPpm: report.clockDriftPpm, outputLatencyMs: report.outputLatencyMs, delayMs: report.delayMs,
                playing: report.playing ?? false, canListen: report.canListen, ageMs: age,
                // A client that does not say whether it plays is graded as before, by both errors.
                grade: SyncGrade.of(clockErrorMs: report.errorMs, playbackErrorMs: report.driftMs, playing: report.playing ?? true, ageMs: age))
        }
        return SyncStatusUpdate(devices: devices)
    }

    /// Whether `device` said in its last report that it can record the room; nil when it
    /// did not say, or has not reported.
    func canListen(_ device: DeviceRef) -> Bool? {
        entries[DeviceKey(user: device.userId, deviceId: device.deviceId)]?.report.canListen
    }

    /// Devices with an id that reported playing within `SyncGrade.staleMs`: those a calibration can use.
    func playingDevices(at now: Millis) -> [DeviceRef] {
        entries.sorted { $0.key < $1.key }.compactMap { key, entry in
            guard !key.deviceId.isEmpty, entry.report.playing == true, Double(now - entry.receivedAt) <= SyncGrade.staleMs else { return nil }
            return DeviceRef(userId: key.user, deviceId: key.deviceId)
        }
    }
}
