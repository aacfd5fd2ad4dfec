import Synchronization

/// Hands out loopback source addresses in turn: 127.0.1.1 … 127.0.4.250.
///
/// A thousand addresses keep every per-address limit of the server (30 sign-ins and 30
/// joins a minute) out of reach for set-ups of up to 30,000 members a minute, and all of
/// them are in 127.0.0.0/8, so nothing leaves the machine.
final class SourceAddresses: Sendable {
    /// The shared rotation.
    static let shared = SourceAddresses()
    private let counter = Atomic<Int>(0)
    private static let pool = 1000

    /// The next address.
    func next() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).oldValue % Self.pool
        return "127.0.\(1 + n / 250).\(1 + n % 250)"
    }
}
