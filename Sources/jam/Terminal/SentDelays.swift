import JamProtocol

/// The delays one host sent for one device and the board has not shown yet, and the value the
/// board showed before the first of them. The board runs behind: until it shows the last sent
/// value it may still show the value from before, or one of the steps on the way. Any other
/// value is another host's change, which the next press must step from.
struct SentDelays: Equatable {
    /// The board's value when the first of these delays was sent.
    var boardThen: Double
    /// The delays sent, oldest first; never empty.
    var sent: [Double]

    /// The delay a press steps from.
    var last: Double { sent[sent.count - 1] }

    /// Whether these delays still wait for a board that shows `value`: false once it shows the
    /// last one (done) or a value nobody here sent (another host's change wins).
    func awaitBoard(showing value: Double) -> Bool {
        value != last && (value == boardThen || sent.contains(value))
    }
}

extension ScreenModel {
    /// Takes a new sync board: the selection follows its device when rows come and go, and a
    /// sent delay is forgotten once the board shows it, shows another host's value, or no longer
    /// lists the device.
    mutating func take(_ board: SyncStatusUpdate) {
        let selected = selectedDevice.map { DeviceRef(userId: $0.userId, deviceId: $0.deviceId ?? "") }
        syncBoard = board
        sentDelays = sentDelays.filter { device, pending in
            guard let row = board.devices.first(where: { Self.ref(of: $0) == device }) else { return false }
            return pending.awaitBoard(showing: row.delayMs ?? 0)
        }
        if let selected, let index = board.devices.firstIndex(where: { Self.ref(of: $0) == selected }) {
            syncSelection = index
        }
        syncSelection = min(syncSelection, max(0, board.devices.count - 1))
    }

    /// The delay a press of `step` milliseconds asks for `device`, remembered as sent; nil when
    /// it would not change (at the limit) or the device has no id to address.
    mutating func stepDelay(of device: DeviceSyncStatus, by step: Double) -> Double? {
        guard device.deviceId != nil else { return nil }
        let ref = Self.ref(of: device)
        let board = device.delayMs ?? 0
        let from = sentDelays[ref]?.last ?? board
        let delay = min(max(from + step, -Validate.maxDeviceDelayMs), Validate.maxDeviceDelayMs)
        guard delay != from else { return nil }
        sentDelays[ref, default: SentDelays(boardThen: board, sent: [])].sent.append(delay)
        return delay
    }

    private static func ref(of device: DeviceSyncStatus) -> DeviceRef {
        DeviceRef(userId: device.userId, deviceId: device.deviceId ?? "")
    }
}
