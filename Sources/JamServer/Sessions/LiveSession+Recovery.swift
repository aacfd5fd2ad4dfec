import Foundation
import JamCore
import JamProtocol
import Logging
import NIOCore

extension LiveSession {
    /// A new session; its first snapshot and index row go to the store at once, before
    /// anything else can reach it.
    static func create(state: SessionState, wire: any SessionWire, environment: SessionEnvironment, eventLoop: any EventLoop) -> LiveSession {
        var state = state
        var shuffle: FallbackShuffle?
        if let supply = fallbackSupply(for: state, shuffle: &shuffle, tracks: environment.library.all) {
            // The reserve a new session starts with is part of its first snapshot.
            applyInfallible(TimedInput(at: environment.clock.now(), .supplyFallback(supply)), to: &state)
        }
        let session = LiveSession(state: state, storedLsn: -1, wire: wire, environment: environment, eventLoop: eventLoop, fallbackShuffle: shuffle)
        environment.pipeline.submit(session.creationWrites, receipt: (session, 0))
        session.dispatch { $0.rescheduleTimer() }
        return session
    }

    /// The epoch a profile's wire starts from for a session read back: a wire may count
    /// epochs the state does not (PirateRadio's new DJs, each caused by someone leaving), so it
    /// starts above the state's epoch by every departure so far, never below what an earlier
    /// run sent. A new session's wire starts at the state's epoch.
    static func wireEpochFloor(_ state: SessionState) -> Int64 {
        // The creator is a member from the start, before the counter's first join.
        let departures = max(0, state.joinCounter - Int64(state.members.count))
        return state.epoch + departures
    }

    /// Brings a stored session back: its older kept snapshot, then its log replayed (which
    /// regenerates the frames a resuming client may ask for), then what the restart itself
    /// changes (nobody is connected any more) and what should have happened meanwhile (the
    /// timeline catches up), both logged like any turn.
    ///
    /// A last record cut short (written only in part when the process died) is ignored, and
    /// goes from the store with the snapshots written after it; the next record takes its
    /// number. A last record that is whole but does not read (another build's), or one that
    /// does not read before others that do, makes the session unreadable: it stays in the
    /// store untouched.
    ///
    /// A replica (a session another node owns) stops after the log: the restart and the
    /// catching up are the owner's to log.
    static func recover(
        _ stored: StoredSession, id: SessionID, entry: StoredSessionEntry, wire makeWire: (Int64) -> any SessionWire,
        environment: SessionEnvironment, eventLoop: any EventLoop, role: SessionRole = .owner
    ) throws(JamError) -> LiveSession {
        var logger = environment.logger
        logger[metadataKey: "session.id"] = "\(id)"
        guard let start = stored.snapshots.first else {
            throw damaged(.snapshotsMissing(id), logger: logger)
        }
        var state: SessionState
        do {
            state = try LogCoding.decodeState(start.state)
        } catch {
            throw damaged(DamagedStoredSession(session: id, part: .snapshot(start.lsn), problem: "has a state that cannot be read (\(error))"), logger: logger)
        }
        var answers = AnswerCache(restoring: start.answers)
        var lastLsn = start.lsn
        var replayed = 0
        // Bounded while it fills, as the outbox's is: a replay of thousands of records with
        // whole-queue frames holds no more than resumes can use.
        var ring = ResumeRing(environment.outbox)
        var replayWire = makeWire(wireEpochFloor(state))
        var ignored: Int64?
        for record in stored.records where record.lsn > start.lsn {
            let inputs: [TimedInput]
            do {
                inputs = try LogCoding.decodeInputs(record.inputs)
            } catch {
                // Cut short, it is not JSON at all; whole JSON this build cannot read was written
                // by another build (a node not yet upgraded, or rolled back), and is kept.
                if record.lsn == stored.records.last?.lsn, !Self.isWholeJSON(record.inputs) {
                    logger.warning("ignoring the session's last record: it was written only in part", metadata: ["record.lsn": "\(record.lsn)", "error": .loggable(error)])
                    ignored = record.lsn
                    break
                }
                throw damaged(DamagedStoredSession(session: id, part: .record(record.lsn), problem: "has inputs that cannot be read (\(error))"), logger: logger)
            }
            do {
                for input in inputs {
                    let events = try state.applyLogged(input).events
                    for frame in replayWire.frames(for: events, cause: .tick, state: state, now: input.at) where frame.logged {
                        ring.append((frame.seq, WebSocketText.frame(frame.bytes)))
                    }
                }
            } catch {
                // Not damage: the data reads, but this build's rules refuse it.
                logger.error("a logged input no longer applies; the session stays in the store untouched", metadata: ["record.lsn": "\(record.lsn)", "error": .loggable(error)])
                throw JamError(.internal, "record \(record.lsn) of session \(id.rawValue)'s log no longer applies: \(error)")
            }
            if adoptNumbering(of: record, into: &state, logger: logger) { ring.removeAll() }
            lastLsn = record.lsn
            replayed += 1
            if let answer = record.answer { answers.remember(answer, lane: AnswerCache.Lane(of: inputs), answering: inputs.first?.input) }
        }
        let session = LiveSession(state: state, storedLsn: lastLsn, wire: makeWire(wireEpochFloor(state)), environment: environment, eventLoop: eventLoop)
        session.assumeIsolated { session in
            session.answers = answers
            session.indexed = entry
            // What was replayed after the newest snapshot counts towards the next one: a server
            // killed before each would otherwise never write one, and every start would replay
            // more. Counted from the older one instead, every restart of a session with two
            // would write a snapshot at its first turn and move the base resumes need up.
            let newest = stored.snapshots.last { $0.lsn <= lastLsn } ?? start
            session.recordsSinceSnapshot = stored.records.count { $0.lsn > newest.lsn && $0.lsn <= lastLsn }
            session.eventsSinceSnapshot = Int(state.seq - newest.seq)
            session.outbox.restoreRing(ring)
            session.role = role
            if role == .owner {
                // Ahead of the records that take its number: a snapshot written after the
                // ignored record (with it, in its batch) holds its change and would otherwise
                // become the base of a later recovery.
                if let ignored { environment.pipeline.submit([.dropTail(id, from: ignored)], receipt: nil) }
                session.resume()
            }
        }
        return session
    }

    /// Whether `bytes` are one whole JSON value (what a record cut short is not).
    static func isWholeJSON(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            return true
        } catch {
            return false
        }
    }

    /// Damage found while replaying, logged for the operator and turned into what requests
    /// for the session are told.
    private static func damaged(_ damage: DamagedStoredSession, logger: Logger) -> JamError {
        logger.error("a stored session is damaged; it stays in the store untouched", metadata: ["error": .loggable(damage)])
        return damage.refusal
    }

    /// What a restart changes, as logged turns: connections reset, the profile's timing, a
    /// fallback reserve for the current library, and the timeline caught up to now.
    private func resume() {
        do {
            try take(.restart(environment.timing), cause: .tick)
            try take(.advance, cause: .tick)
            releaseMembersWithoutSockets()
        } catch {
            logger.error("resuming a stored session failed", metadata: ["error": .loggable(error)])
        }
        rescheduleTimer()
    }

    /// Where sockets are membership, members without one leave (after a restart none has one),
    /// the host last: each leave of a host passes the role on, so after the last one it would
    /// rest with whoever left last, and a host who comes back would find it taken.
    func releaseMembersWithoutSockets() {
        guard wire.socketsAreMembership else { return }
        let host = state.hostId
        let leaving = state.members.filter { member in !connections.values.contains { $0.user == member.userId } }
        for member in leaving.filter({ $0.userId != host }) + leaving.filter({ $0.userId == host }) {
            do {
                try take(.command(.leave, by: member.userId), cause: .command(.leave, by: member.userId, connection: nil, relay: nil))
            } catch {
                logger.debug("leave not applied", metadata: ["error": .loggable(error)])
            }
        }
    }
}

extension LiveSession {
    /// The server is stopping: sockets close normally and timers stop.
    ///
    /// No snapshot is written here: a recovery replays from the older of the two snapshots
    /// kept, so one more at each stop would only move that base up to the stop before, and two
    /// restarts a few events apart would leave a client a ring too short to resume from.
    func shutdown() {
        stopTimers()
        var deliveries: [RealtimeConnection.Delivery] = []
        for (key, connection) in connections {
            outbox.detach(key)
            deliveries.append(.init(connection: connection, frames: [], close: (.normal, "the server is stopping")))
        }
        connections.removeAll()
        RealtimeConnection.deliver(deliveries)
    }
}
