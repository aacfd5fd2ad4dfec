import NIOConcurrencyHelpers

/// Open realtime sockets (or connections) per client address, so one address cannot hold the
/// server's file descriptors (or every member slot of a session) by opening sockets it never
/// uses.
///
/// Shared by every event loop, so a lock rather than an actor: the check sits on the
/// upgrade path of every socket, and on the accept of every connection, and must not hop.
package final class SocketCaps: Sendable {
    /// Most sockets one address may hold open; a party behind one router shares an address,
    /// so the default leaves room for a big one.
    package let limit: Int
    private let open = NIOLockedValueBox<[String: Int]>([:])

    package init(limit: Int) {
        self.limit = limit
    }

    /// Counts one more socket for `address`; false (counting nothing) when it holds `limit` already.
    package func acquire(_ address: String) -> Bool {
        open.withLockedValue { open in
            let count = open[address, default: 0]
            guard count < limit else { return false }
            open[address] = count + 1
            return true
        }
    }

    /// Forgets one socket of `address`; the address leaves the table with its last socket.
    package func release(_ address: String) {
        open.withLockedValue { open in
            guard let count = open[address] else { return }
            open[address] = count > 1 ? count - 1 : nil
        }
    }

    /// Sockets `address` holds open now.
    package func count(_ address: String) -> Int {
        open.withLockedValue { $0[address, default: 0] }
    }

    /// Addresses holding at least one socket (the table never outgrows the open sockets).
    package var addresses: Int {
        open.withLockedValue { $0.count }
    }
}
