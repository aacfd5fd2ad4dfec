import Foundation
import JamCore
import JamProtocol
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Every session the server knows, by ID and by join code.
///
/// At start only the store's index is read: a stored session comes back (snapshot plus log)
/// the first time somebody asks for it, or when its next deadline comes, so a server with
/// thousands of stored sessions serves within moments of starting. Live sessions are spread
/// over the event loops; each stays on its loop for life.
public final class SessionRegistry: Service, Sendable {
    enum Entry {
        case stored(StoredSessionEntry)
        case loading(EventLoopFuture<LiveSession>, StoredSessionEntry)
        case live(LiveSession)
        case ended
        case unreadable(JamError)
    }

    struct Index {
        var entries: [SessionID: Entry] = [:]
        var codes: [String: SessionID] = [:]
        /// When each live code was issued, for profiles whose codes expire.
        var codeIssuedAt: [String: Millis] = [:]
        /// New codes reserved in `codes` for requests still setting them.
        var codesBeingSet: Set<String> = []
        /// Stored sessions to bring back at their deadline (ended ones: to purge), soonest first.
        var wakeUps: [(at: Millis, id: SessionID)] = []
        /// When the registry last let go of the sessions that ended in memory.
        var lastSweep: Millis = 0
        /// When a node of several last looked in the database for deadlines nobody serves.
        var lastDeadlineScan: Millis = 0

        /// Lets go of every code the sessions `ids` hold: they ended, or this node no longer
        /// knows who holds them (the database does). One pass over the codes, for any number.
        mutating func dropCodes(of ids: Set<SessionID>) {
            guard !ids.isEmpty else { return }
            for (code, owner) in codes where ids.contains(owner) {
                codes[code] = nil
                codeIssuedAt[code] = nil
            }
        }

        /// Adds a wake-up, keeping the list in order.
        mutating func schedule(_ id: SessionID, at: Millis) {
            let position = wakeUps.firstIndex { $0.at > at } ?? wakeUps.count
            wakeUps.insert((at, id), at: position)
        }
        var library = LibraryTracks.none
    }

    let index = Mutex(Index())
    /// Set once the server stops: its sessions are stored, and the lease poll and the
    /// cluster's notifications take no session over and apply nothing more, though the
    /// cluster node keeps its leases until the last writes are in.
    let stopping = Atomic<Bool>(false)
    let store: any SessionStore
    let baseEnvironment: SessionEnvironment
    let defaults: SessionDefaults
    let loops: any EventLoopGroup
    let logger: Logger
    let clock: any ServerClock

    /// The node, when several share a PostgreSQL database.
    let cluster: ClusterNode?

    init(store: any SessionStore, environment: SessionEnvironment, defaults: SessionDefaults, loops: any EventLoopGroup) {
        self.store = store
        self.cluster = environment.cluster
        self.baseEnvironment = environment
        self.defaults = defaults
        self.loops = loops
        self.logger = environment.logger
        self.clock = environment.clock
        index.withLock { $0.library = environment.library }
    }

    var environment: SessionEnvironment {
        var environment = baseEnvironment
        environment.library = index.withLock { $0.library }
        return environment
    }

    // MARK: Finding sessions

    /// The session `id`: 404 when unknown, 410 when it has ended. A stored session is brought
    /// back first.
    package func session(_ id: SessionID) async throws(JamError) -> LiveSession {
        if let cluster, await !cluster.isConnectedOnceTried() {
            // Its sessions were let go with the connection; nothing can be read or applied.
            throw JamError(.unavailable, "the database is unreachable; try again")
        }
        enum Step {
            case lookUp
            case found(LiveSession)
            case wait(EventLoopFuture<LiveSession>)
            case load(StoredSessionEntry, EventLoopPromise<LiveSession>)
        }
        let step = try index.withLock { index throws(JamError) -> Step in
            switch index.entries[id] {
            case .live(let session)? where session.releasedFlag.load(ordering: .acquiring):
                // Let go (its lease was lost, or it fell behind): read it again, and its codes
                // too, as another node may have ended it and given them to another session.
                index.entries[id] = nil
                index.dropCodes(of: [id])
                return .lookUp
            case .live(let session)?:
                guard session.hasEnded else { return .found(session) }
                forget(id, in: &index)
                throw JamError(.gone, "the session has ended")
            case .loading(let future, _)?:
                return .wait(future)
            case .stored(let entry)?:
                let promise = loops.next().makePromise(of: LiveSession.self)
                index.entries[id] = .loading(promise.futureResult, entry)
                return .load(entry, promise)
            case .ended?:
                throw JamError(.gone, "the session has ended")
            case .unreadable(let error)?:
                throw error
            case nil:
                guard cluster != nil else { throw JamError(.notFound, "no session \(id)") }
                return .lookUp
            }
        }
        switch step {
        case .lookUp:
            // Another node may have created it.
            guard let entry = try await sharedEntry(id) else { throw JamError(.notFound, "no session \(id)") }
            index.withLock { index in
                if index.entries[id] == nil { index.entries[id] = entry.ended ? .ended : .stored(entry) }
            }
            guard !entry.ended else { throw JamError(.gone, "the session has ended") }
            return try await session(id)
        case .found(let session):
            return session
        case .wait(let future):
            return try await Self.await(future)
        case .load(let entry, let promise):
            do {
                let session = try await bringBack(entry, on: promise.futureResult.eventLoop)
                let library = index.withLock { index in
                    index.entries[id] = .live(session)
                    return index.library
                }
                // A rescan while the session was read did not find it to update: it takes the
                // library of that scan now (nothing to do when it has it).
                await session.useLibrary(library)
                // The lease connection broke while the session was read: `leasesLost` lets go
                // only the sessions published before it, so this one would serve with no lease.
                // Checked after publishing, so one of the two sees it.
                if let cluster, !session.isReplica, !cluster.holds(id) {
                    await session.release("this server lost its database connection while reading the session")
                }
                promise.succeed(session)
                return session
            } catch {
                // Not served here: a lease this read (or the lease poll, seeing it read) took
                // would keep every node from the session. Before the entry changes, so that no
                // read started after it loses its own lease to this release.
                cluster?.release(id)
                // A store that did not answer may next time: only what it answered stays refused.
                index.withLock { $0.entries[id] = error.code == .unavailable ? .stored(entry) : .unreadable(error) }
                promise.fail(error)
                throw error
            }
        }
    }

    /// A stored session as the store reads it, with damage as a value rather than an error.
    private static func load(_ id: SessionID, from store: any SessionStore) async throws -> Result<StoredSession?, DamagedStoredSession> {
        do {
            return .success(try await store.loadSession(id))
        } catch let damage as DamagedStoredSession {
            return .failure(damage)
        }
    }

    private static func await(_ future: EventLoopFuture<LiveSession>) async throws(JamError) -> LiveSession {
        do {
            return try await future.get()
        } catch let error as JamError {
            throw error
        } catch {
            throw JamError(.internal, "the session could not be loaded: \(error)")
        }
    }

    private func bringBack(_ entry: StoredSessionEntry, on loop: any EventLoop) async throws(JamError) -> LiveSession {
        // Damage comes back as a value, so it cannot be mistaken for a store that did not answer.
        let read: Result<StoredSession?, DamagedStoredSession>
        do {
            let (store, id) = (self.store, entry.id)
            if let cluster {
                read = try await cluster.withDatabase { try await Self.load(id, from: store) }
            } else {
                read = try await Self.load(id, from: store)
            }
        } catch {
            logger.error("reading a stored session failed", metadata: ["session.id": "\(entry.id)", "error": .loggable(error)])
            throw JamError(.unavailable, "the session could not be read from the store; try again")
        }
        let stored: StoredSession
        switch read {
        case .success(let found?):
            stored = found
        case .success(nil):
            throw JamError(.notFound, "no session \(entry.id)")
        case .failure(let damage):
            // Not a passing failure: the session stays as stored, for its operator to look at.
            logger.error("a stored session is damaged", metadata: ["session.id": "\(entry.id)", "error": .loggable(damage)])
            throw damage.refusal
        }
        let environment = self.environment
        let defaults = self.defaults
        // Whoever holds the lease applies the session's commands; the others follow it.
        let role: SessionRole = if let cluster { await cluster.tryLock([entry.id]).contains(entry.id) ? .owner : .replica } else { .owner }
        // Replaying touches only the new session, but it runs on its loop like everything else it does.
        let future = loop.submit { () throws -> LiveSession in
            try LiveSession.recover(stored, id: entry.id, entry: entry, wire: defaults.makeWire, environment: environment, eventLoop: loop, role: role)
        }
        let session = try await Self.await(future)
        if role == .owner, cluster != nil { await session.drainInbox() }
        return session
    }

    /// The sessions in memory that have not ended (stored ones not yet brought back are left out).
    package var liveSessions: [LiveSession] {
        index.withLock { index in
            index.entries.values.compactMap { entry in
                if case .live(let session) = entry, !session.hasEnded { return session }
                return nil
            }
        }
    }

    /// Every session this node knows that has not ended, live or stored (a profile that keeps
    /// an index over members reads them all once at start).
    package var unendedSessionIDs: [SessionID] {
        index.withLock { index in
            index.entries.compactMap { id, entry in
                switch entry {
                case .live(let session): session.hasEnded ? nil : id
                case .stored, .loading: id
                case .ended, .unreadable: nil
                }
            }
        }
    }

    /// Why this server cannot take commands now, or nil when it can: a node that lost its
    /// connection to the shared database refuses every request until it is back, and any
    /// server refuses commands while its store refuses or hangs on a commit.
    package var unavailableBecause: String? {
        if let cluster, !cluster.isConnected { return "the database is unreachable" }
        if baseEnvironment.pipeline.isStalled { return "the store does not take writes" }
        return nil
    }

    /// Number of sessions that have not ended (live or stored).
    package var liveCount: Int {
        index.withLock { index in
            for (id, entry) in index.entries {
                if case .live(let session) = entry, session.hasEnded { forget(id, in: &index) }
            }
            return index.entries.values.reduce(0) { count, entry in
                switch entry {
                case .ended, .unreadable: count
                case .live, .stored, .loading: count + 1
                }
            }
        }
    }

    /// A rescan changed the library: new sessions and live ones shuffle the new tracks.
    func libraryChanged(_ tracks: [Track]) async {
        let library = LibraryTracks(tracks)
        let live = index.withLock { index -> [LiveSession] in
            index.library = library
            return index.entries.values.compactMap { if case .live(let session) = $0 { session } else { nil } }
        }
        for session in live { await session.useLibrary(library) }
    }

    /// A fresh ID for an item or a session.
    package func newID() -> JamID { baseEnvironment.ids.next() }

    /// Marks a session that ended in memory as ended (letting go of it and its codes) and
    /// schedules the purge of its rows once the retention is over.
    func forget(_ id: SessionID, in index: inout Index) {
        index.entries[id] = .ended
        index.dropCodes(of: [id])
        if let retention = baseEnvironment.endedRetentionMs { index.schedule(id, at: clock.now() + retention) }
    }
}
