import JamProtocol
import Logging
import ServiceLifecycle

/// Where an open socket is membership (PirateRadio), a member without one leaves, as that
/// profile's server drops whoever has no socket at its sweep every 15 s. A closing socket
/// makes its member leave at once, and a restart makes every stored member leave; the sweep
/// catches members who never had a socket: a creator who never connects. Leaving then ends a
/// session with no music at once, and one with music after its grace period, as a last
/// socket closing does.
package struct SocketMembershipSweep: Service {
    let registry: SessionRegistry
    let interval: Duration
    let logger: Logger

    /// A sweep of `registry`'s sessions every `interval`.
    package init(registry: SessionRegistry, interval: Duration, logger: Logger) {
        self.registry = registry
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        var tally = SocketlessTally()
        await repeatUntilShutdown(every: interval) {
            var sessions: [SessionID: LiveSession] = [:]
            var socketless: [SessionID: Set<UserID>] = [:]
            for session in registry.liveSessions {
                let users = await session.membersWithoutSockets()
                guard !users.isEmpty else { continue }
                sessions[session.id] = session
                socketless[session.id] = users
            }
            for (id, users) in tally.sweep(socketless) {
                guard let session = sessions[id] else { continue }
                for user in users.sorted() { await session.leaveWithoutSocket(user) }
                logger.info("members without a socket left", metadata: ["session.id": "\(id)", "members": "\(users.count)"])
            }
        }
    }
}

/// Which members have had no socket for two sweeps running: one seen without a socket only
/// once may be between creating the session and opening its socket.
struct SocketlessTally {
    private var previous: [SessionID: Set<UserID>] = [:]

    /// Takes the members without a socket now, per session; returns those of them who had
    /// none at the previous sweep either.
    mutating func sweep(_ now: [SessionID: Set<UserID>]) -> [SessionID: Set<UserID>] {
        var due: [SessionID: Set<UserID>] = [:]
        for (id, users) in now {
            let both = users.intersection(previous[id] ?? [])
            if !both.isEmpty { due[id] = both }
        }
        previous = now
        return due
    }
}
