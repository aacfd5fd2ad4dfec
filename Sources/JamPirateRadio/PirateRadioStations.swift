import JamPirateRadioWire
import JamProtocol
import Synchronization

/// The users `/auth` has seen, with the display name and FM frequency `GET /stations` shows
/// for the sessions they created. PirateRadio's server keeps them in memory for as long as it
/// runs; so does the profile, up to `capacity` users (the oldest are forgotten first, since
/// `/auth` is open to anyone).
final class PirateRadioStations: Sendable {
    /// A user as the dial shows them.
    struct User: Sendable {
        var displayName: String
        /// The frequency in tenths of a MHz (881 is 88.1 MHz).
        var tenths: Int
    }

    private struct Registry {
        var users: [String: User] = [:]
        var order: [String] = []
        var next = lowest
    }

    static let lowest = 881
    static let highest = 1079
    private let registry = Mutex(Registry())
    private let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// Records a sign-in: a new user gets the next free frequency, a known one a new name.
    func signedIn(_ userId: String, displayName: String) {
        registry.withLock { registry in
            if registry.users[userId] != nil {
                registry.users[userId]?.displayName = displayName
                return
            }
            // As PirateRadio's server assigns them: the next free one 0.2 MHz up, wrapping at the top.
            let taken = Set(registry.users.values.map(\.tenths))
            var frequency = registry.next
            var attempts = 0
            while taken.contains(frequency) && attempts < 200 {
                frequency = Self.step(frequency)
                attempts += 1
            }
            registry.next = Self.step(frequency)
            registry.users[userId] = User(displayName: displayName, tenths: frequency)
            registry.order.append(userId)
            if registry.order.count > capacity {
                let gone = registry.order.removeFirst()
                registry.users[gone] = nil
            }
        }
    }

    /// The user `userId`, when `/auth` has seen them.
    func user(_ userId: String) -> User? {
        registry.withLock { $0.users[userId] }
    }

    private static func step(_ tenths: Int) -> Int {
        tenths + 2 > highest ? lowest : tenths + 2
    }
}

extension PirateRadio {
    /// One live station in `GET /stations`.
    struct Station: JSONWritable, Sendable {
        var userId: String
        var displayName: String
        var frequency: Double
        var sessionId: String
        var currentTrack: RawJSON?

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("currentTrack", orNull: currentTrack)
                $0.field("displayName", displayName)
                $0.field("frequency", frequency)
                $0.field("sessionId", sessionId)
                $0.field("userId", userId)
            }
        }
    }

    /// `GET /stations` answer.
    struct Stations: JSONWritable, Sendable {
        var stations: [Station]

        func write(to json: inout JSONWriter) {
            json.object { $0.field("stations", array: stations) }
        }
    }
}
