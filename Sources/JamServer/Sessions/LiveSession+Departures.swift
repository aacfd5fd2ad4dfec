import JamCore
import JamProtocol
import NIOCore

/// Members whose sockets are gone: the disconnect (or leave) a closed socket makes, an idle
/// session's end, and the departures and takeover connects the store refused, tried again.
extension LiveSession {
    /// A socket of `user` is gone: the member disconnects (or, where sockets are membership,
    /// leaves once their last socket is gone).
    func socketGone(_ user: UserID) {
        guard let command = departure(of: user) else { return }
        if role == .replica {
            // A disconnect gets an id of its own: sent again after a failure whose outcome is
            // unknown, the owner answers it from its answers instead of applying it twice.
            let id: String? = if case .disconnect = command { "depart-\(environment.ids.next().rawValue)" } else { nil }
            forwardFromSocket(command, by: user, connection: nil, replyId: id)
            return
        }
        depart(user, with: command)
    }

    /// The members with no socket to the session, where sockets are membership; none
    /// otherwise, on a replica, or with several nodes (a member's socket may be on another
    /// node, and such profiles run as one node).
    package func membersWithoutSockets() -> Set<UserID> {
        guard wire.socketsAreMembership, role == .owner, environment.cluster == nil, !state.hasEnded else { return [] }
        let open = Set(connections.values.map(\.user))
        return Set(state.members.lazy.map(\.userId).filter { !open.contains($0) })
    }

    /// `user` leaves if they still have no socket (`SocketMembershipSweep`); a refusal by the
    /// store is tried again as a closed socket's is.
    package func leaveWithoutSocket(_ user: UserID) {
        guard wire.socketsAreMembership, role == .owner, let command = departure(of: user) else { return }
        depart(user, with: command)
    }

    /// Nobody in the session sent a message for the profile's idle timeout: as PirateRadio's
    /// server destroys such a session, every socket closes with the timeout's code and the
    /// session ends (`SessionInput.idleEnd`). Left to close one by one, the sockets would hand
    /// the DJ role to whoever's socket closed after the DJ's, and the apps, which reconnect
    /// after this code, would find the session still there. A message heard since the socket
    /// looked (on another event loop, before this turn) keeps the session: the socket looks
    /// again when the timeout has passed since that message. Where this node does not end
    /// the session (another owns it, or it was let go), the socket closes on its own.
    func idledOut(_ idle: IdleTimeout) -> IdleVerdict {
        let limit = TimeAmount.milliseconds(idle.milliseconds)
        let silent = silence(at: .now())
        guard silent >= limit else { return .heard(lookAgainIn: limit - silent) }
        guard role == .owner, !releasedFlag.load(ordering: .relaxed) else { return .socketClosesAlone }
        // Ended already: the end closes every socket.
        guard !state.hasEnded else { return .ends }
        let now = environment.clock.now()
        // Behind the end's own record (the next): the sockets close once the end is stored,
        // before the end's own close (4410), which then finds none.
        execute(outbox.enqueue(.close(.everyone, CloseCode(rawValue: idle.code), idle.reason), after: nextLsn, now: now))
        do {
            _ = try take(.idleEnd, cause: .tick)
        } catch {
            // Not taken (let go meanwhile): the close waits behind a record that will not be
            // stored, so each socket closes on its own.
            logger.warning("an idle session could not be ended", metadata: ["error": .loggable(error)])
            return .socketClosesAlone
        }
        return .ends
    }

    /// How long no member's socket has sent a message, at `now`: zero when one was heard
    /// after `now` was read (on another event loop).
    nonisolated package func silence(at now: NIODeadline) -> TimeAmount {
        let (heard, uptime) = (lastMessageNanos.load(ordering: .relaxed), now.uptimeNanoseconds)
        return heard < uptime ? .nanoseconds(Int64(uptime - heard)) : .zero
    }

    /// What a closed socket of `user` makes them do now, if anything.
    private func departure(of user: UserID) -> Command? {
        guard !state.hasEnded, state.member(user) != nil else { return nil }
        if wire.socketsAreMembership {
            return connections.values.contains(where: { $0.user == user }) ? nil : .leave
        }
        return .disconnect
    }

    private func depart(_ user: UserID, with command: Command) {
        do {
            try take(.command(command, by: user), cause: .command(command, by: user, connection: nil, relay: nil))
        } catch {
            logger.debug("a socket's close was not applied", metadata: ["error": .loggable(error)])
            // Refused because the store is failing: the member would stay "connected" (counted
            // for skips and starts) for good. Tried again until the store takes it.
            if error.code == .unavailable, !releasedFlag.load(ordering: .relaxed) {
                departuresWaiting[user, default: 0] += 1
                scheduleDepartureRetry()
            }
        }
    }

    /// Tries the waiting departures again in a second.
    func scheduleDepartureRetry() {
        guard departureTimer == nil, !departuresWaiting.isEmpty || !forwardsWaiting.isEmpty || !connectsWaiting.isEmpty else { return }
        departureTimer = eventLoop.scheduleTask(in: .seconds(1)) { [self] in
            self.assumeIsolated { session in
                session.departureTimer = nil
                session.retryDepartures()
            }
        }
    }

    /// Applies the departures the store refused before: each closed socket's disconnect, or
    /// the leave of a member who has no socket now.
    func retryDepartures() {
        retryForwards()
        guard role == .owner else {
            departuresWaiting = [:]
            connectsWaiting = []
            return
        }
        let connects = connectsWaiting
        connectsWaiting = []
        for connection in connects { connectAfterTakeover(connection) }
        let waiting = departuresWaiting
        departuresWaiting = [:]
        for (user, closed) in waiting {
            for _ in 0..<closed {
                guard let command = departure(of: user) else { break }
                if case .disconnect = command {
                    // Only sockets the state still counts: a member who left and came back
                    // meanwhile has a membership of their own, counted afresh.
                    let open = connections.values.reduce(0) { $0 + ($1.user == user ? 1 : 0) }
                    guard (state.members.first { $0.userId == user }?.connections ?? 0) > open else { break }
                }
                depart(user, with: command)
            }
        }
    }
}

/// What a session made of a socket's finding that it went quiet (`LiveSession.idledOut`).
enum IdleVerdict: Equatable {
    /// The session ends (or has ended); its sockets close once the end is stored.
    case ends
    /// The session is not ended here (another node owns it, or it was let go): the socket
    /// closes on its own.
    case socketClosesAlone
    /// A message came since: the socket looks again after this long.
    case heard(lookAgainIn: TimeAmount)
}
