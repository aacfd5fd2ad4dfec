import JamProtocol
import NIOCore

/// A realtime connection's number, unique in the process.
package typealias ConnectionID = Int

/// Who a broadcast frame is for.
package enum Audience: Sendable, Equatable {
    case everyone
    case everyoneExcept(ConnectionID)
    case user(UserID)
    /// The user's sockets but one (the one whose command caused the frame, which has its answer).
    case userExcept(UserID, ConnectionID)
}

/// What a session does with its frames, as a value that takes inputs and returns actions.
///
/// A change's frames wait until the store holds the record they follow (`stored(through:)`),
/// then go to every attached connection that has not seen them yet, in order, with the
/// session's direct replies, waiting REST callers and closes in the same queue. Released
/// frames the profile logs go into a bounded ring for `hello {lastSeq}`. A connection whose
/// socket stops draining (unwritable) is evicted with `4429` once it has fallen `backlogLimit`
/// frames, `backlogBytesLimit` bytes or `stallTimeoutMs` behind, so one slow phone never holds
/// up the others, nor a reader that asks for the whole state again and again fills memory.
/// `LiveSession` carries the actions out; `SessionOutboxTests` drive it with a test clock.
struct SessionOutbox {
    struct Configuration: Sendable, Equatable {
        /// Logged frames kept for resumes.
        var replayLimit: Int
        /// Bytes those frames may take: a session with a long queue sends big frames, and a
        /// thousand of them would hold tens of MiB for resumes a full state answers as well.
        var replayBytesLimit: Int = 1 << 20
        /// Frames a connection may be sent while its socket does not drain.
        var backlogLimit: Int
        /// Bytes of those frames: a session's whole state can be MiBs, and a frame count alone
        /// would let a reader that never drains hold hundreds of them.
        var backlogBytesLimit: Int = 8 << 20
        /// How long a connection may stay undrained before it is evicted anyway.
        var stallTimeoutMs: Int64
    }

    /// Whose sockets a close is for.
    enum CloseTarget: Sendable, Equatable {
        case user(UserID)
        case everyone
    }

    enum Item: Sendable {
        case broadcast(WireFrame)
        case direct(ConnectionID, ByteBuffer)
        case waiter(Int)
        case close(CloseTarget, CloseCode, String)
        case ended
    }

    /// What the session must do now.
    struct Actions: Sendable {
        /// Frames per connection, in order; connections in the order they first got one.
        private(set) var writes: [(connection: ConnectionID, frames: [ByteBuffer])] = []
        private var writeIndex: [ConnectionID: Int] = [:]
        /// Sockets to close (after their frames above), with the code and reason.
        var closes: [(connection: ConnectionID, code: CloseCode, reason: String)] = []
        /// Connections evicted as slow readers, with their users: closed above, and gone from the session.
        var evicted: [(connection: ConnectionID, user: UserID)] = []
        /// REST callers whose change is now stored.
        var resumed: [Int] = []
        /// The session's end is stored and announced.
        var ended = false

        var isEmpty: Bool { writes.isEmpty && closes.isEmpty && resumed.isEmpty && !ended }

        mutating func write(_ frame: ByteBuffer, to connection: ConnectionID) {
            if let index = writeIndex[connection] {
                writes[index].frames.append(frame)
            } else {
                writeIndex[connection] = writes.count
                writes.append((connection, [frame]))
            }
        }

        /// The frames for one connection (tests).
        func frames(for connection: ConnectionID) -> [ByteBuffer] {
            writeIndex[connection].map { writes[$0].frames } ?? []
        }
    }

    private struct Peer {
        let user: UserID
        /// Frames up to this `seq` are covered by what the connection already has.
        var syncedSeq: Int64
        /// Frames sent since the socket stopped draining, and their bytes.
        var backlog = 0
        var backlogBytes = 0

        /// Counts `frame` as sent to a socket that does not drain, if this one does not.
        mutating func count(_ frame: ByteBuffer) {
            guard !writable else { return }
            backlog += 1
            backlogBytes += frame.readableBytes
        }
        /// When the socket stopped draining; nil while it drains.
        var unwritableSince: Millis?
        var writable: Bool { unwritableSince == nil }
    }

    let configuration: Configuration
    /// The last record the store holds.
    private(set) var storedLsn: Int64
    /// The newest logged frame released.
    private(set) var publishedSeq: Int64
    private var pending = CircularBuffer<(lsn: Int64, item: Item)>()
    private var peers: [ConnectionID: Peer] = [:]
    /// The peers whose socket is not draining (`unwritableSince` set): asked after every turn,
    /// so indexed here rather than found by walking `peers`.
    private var unwritable: Set<ConnectionID> = []
    private var ring: ResumeRing
    /// The bytes of the frames kept for resumes.
    var ringBytes: Int { ring.bytes }

    /// An outbox whose store already holds record `storedLsn`, and whose newest published
    /// event is `publishedSeq`.
    init(configuration: Configuration, storedLsn: Int64, publishedSeq: Int64) {
        self.configuration = configuration
        self.storedLsn = storedLsn
        self.publishedSeq = publishedSeq
        ring = ResumeRing(configuration)
    }

    /// Frames to resume from (a session brought back from the store), kept to this outbox's limits.
    mutating func restoreRing(_ restored: ResumeRing) {
        ring = ResumeRing(configuration)
        for frame in restored.frames { ring.append(frame) }
        if let last = restored.frames.last { publishedSeq = max(publishedSeq, last.seq) }
    }

    /// Events up to `seq` were numbered by another build than the frames kept so far: nobody
    /// resumes from those frames any more, and a connection behind `seq` gets the whole state.
    mutating func renumbered(through seq: Int64) {
        ring.removeAll()
        publishedSeq = max(publishedSeq, seq)
    }

    /// Attached connections.
    var connections: [ConnectionID] { Array(peers.keys) }

    /// True when `connection` is attached.
    func isAttached(_ connection: ConnectionID) -> Bool { peers[connection] != nil }

    /// Logged frames in the ring (for tests and metrics).
    var ringCount: Int { ring.frames.count }

    // MARK: Inputs

    /// A connection joins; it already has everything up to `syncedSeq`.
    mutating func attach(_ connection: ConnectionID, user: UserID, syncedSeq: Int64) {
        peers[connection] = Peer(user: user, syncedSeq: syncedSeq)
        unwritable.remove(connection)
    }

    /// A connection got the whole state as of `seq`: frames up to it are covered.
    mutating func resync(_ connection: ConnectionID, at seq: Int64) {
        peers[connection]?.syncedSeq = seq
    }

    /// A connection is gone (its socket closed).
    mutating func detach(_ connection: ConnectionID) {
        peers[connection] = nil
        unwritable.remove(connection)
    }

    /// Queues `item` behind record `lsn`; returns what can go out now.
    mutating func enqueue(_ item: Item, after lsn: Int64, now: Millis) -> Actions {
        pending.append((lsn, item))
        return release(now: now)
    }

    /// The store holds every record up to `lsn`.
    mutating func stored(through lsn: Int64, now: Millis) -> Actions {
        storedLsn = max(storedLsn, lsn)
        return release(now: now)
    }

    /// A frame relayed as it came, unstored (a PirateRadio listener's drift report for its DJ),
    /// to `user`'s connections, the sender's among them when it is `user`'s (PirateRadio's
    /// server hands a DJ its own report too). It goes only to sockets that drain and never
    /// counts toward a backlog: a report is advice the next one replaces, so a listener sending
    /// faster than the DJ reads loses reports, and cannot get the DJ evicted as a slow reader.
    func relay(_ frame: ByteBuffer, to user: UserID) -> Actions {
        var actions = Actions()
        for (connection, peer) in peers where peer.user == user && peer.writable {
            actions.write(frame, to: connection)
        }
        return actions
    }

    /// Resumes `connection` after `lastSeq` from the ring: the missed frames, or nil when the
    /// ring no longer (or never) had them and the connection needs the whole state instead.
    mutating func replay(to connection: ConnectionID, after lastSeq: Int64, now: Millis) -> Actions? {
        guard var peer = peers[connection], lastSeq <= publishedSeq else { return nil }
        let oldest = ring.frames.first?.seq ?? publishedSeq + 1
        guard lastSeq >= oldest - 1 else { return nil }
        var actions = Actions()
        for entry in ring.frames where entry.seq > lastSeq {
            actions.write(entry.bytes, to: connection)
            peer.count(entry.bytes)
        }
        peer.syncedSeq = max(lastSeq, publishedSeq)
        peers[connection] = peer
        if isStalled(peer, now: now) { evict(connection, into: &actions) }
        return actions
    }

    /// The socket of `connection` stopped (false) or resumed (true) draining.
    mutating func writabilityChanged(_ connection: ConnectionID, writable: Bool, now: Millis) -> Actions {
        guard var peer = peers[connection] else { return Actions() }
        if writable {
            peer.backlog = 0
            peer.backlogBytes = 0
            peer.unwritableSince = nil
            unwritable.remove(connection)
        } else {
            if peer.unwritableSince == nil { peer.unwritableSince = now }
            unwritable.insert(connection)
        }
        peers[connection] = peer
        return Actions()
    }

    /// Time passed: evicts connections that have not drained for `stallTimeoutMs`.
    mutating func tick(now: Millis) -> Actions {
        var actions = Actions()
        for (connection, peer) in peers where isStalled(peer, now: now) {
            evict(connection, into: &actions)
        }
        return actions
    }

    /// Whether a connection is stalled and should be checked again later.
    var hasStalledConnections: Bool { !unwritable.isEmpty }

    // MARK: Release

    private mutating func release(now: Millis) -> Actions {
        var actions = Actions()
        while let head = pending.first, head.lsn <= storedLsn {
            pending.removeFirst()
            switch head.item {
            case .broadcast(let frame):
                if frame.logged {
                    publishedSeq = max(publishedSeq, frame.seq)
                    ring.append((frame.seq, frame.bytes))
                }
                var stalled: [ConnectionID] = []
                // Values change in place (no copy of the table per frame); evictions come after.
                for index in peers.indices {
                    let (connection, peer) = peers[index]
                    guard peer.syncedSeq < frame.seq, Self.matches(frame.audience, connection, peer.user) else { continue }
                    actions.write(frame.bytes, to: connection)
                    if !peer.writable {
                        peers.values[index].count(frame.bytes)
                        if isStalled(peers.values[index], now: now) { stalled.append(connection) }
                    }
                }
                for connection in stalled { evict(connection, into: &actions) }
            case .direct(let connection, let bytes):
                guard var peer = peers[connection] else { continue }
                actions.write(bytes, to: connection)
                peer.count(bytes)
                peers[connection] = peer
                if isStalled(peer, now: now) { evict(connection, into: &actions) }
            case .waiter(let id):
                actions.resumed.append(id)
            case .close(let target, let code, let reason):
                for (connection, peer) in peers where target == .everyone || target == .user(peer.user) {
                    actions.closes.append((connection, code, reason))
                    peers[connection] = nil
                    unwritable.remove(connection)
                }
            case .ended:
                actions.ended = true
            }
        }
        return actions
    }

    private func isStalled(_ peer: Peer, now: Millis) -> Bool {
        if peer.backlog > configuration.backlogLimit || peer.backlogBytes > configuration.backlogBytesLimit { return true }
        guard let since = peer.unwritableSince else { return false }
        return now - since >= configuration.stallTimeoutMs
    }

    private mutating func evict(_ connection: ConnectionID, into actions: inout Actions) {
        guard let peer = peers.removeValue(forKey: connection) else { return }
        unwritable.remove(connection)
        actions.closes.append((connection, .slowReader, "too slow: the connection fell behind"))
        actions.evicted.append((connection, peer.user))
    }

    private static func matches(_ audience: Audience, _ connection: ConnectionID, _ user: UserID) -> Bool {
        switch audience {
        case .everyone: true
        case .everyoneExcept(let excluded): connection != excluded
        case .user(let target): user == target
        case .userExcept(let target, let excluded): user == target && connection != excluded
        }
    }
}

extension SessionOutbox.Actions {
    /// Appends `other`'s actions after these.
    mutating func merge(_ other: SessionOutbox.Actions) {
        guard !other.isEmpty else { return }
        for (connection, frames) in other.writes {
            for frame in frames { write(frame, to: connection) }
        }
        closes += other.closes
        evicted += other.evicted
        resumed += other.resumed
        ended = ended || other.ended
    }
}
