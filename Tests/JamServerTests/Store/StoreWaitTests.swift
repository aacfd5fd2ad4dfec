import Foundation
import JamProtocol
import JamTestSupport
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

@testable import JamServer

/// A request waiting for the store hears when the store refuses or hangs, instead of waiting
/// with no end; what it changed stays queued and is stored once the store answers.
@Suite struct StoreWaitTests {
    /// An in-memory store whose commits hang while `hanging`, as a database that stops
    /// answering without closing its connection does (`blocking`: holding the store's thread,
    /// as SQLite on a stuck disk would); `resume` writes what it held.
    final class HangingStore: SessionStore {
        let stored = InMemorySessionStore()
        let blocking: Bool
        private let state = Mutex<(hanging: Bool, held: [(writes: [StoreWrite], loop: any EventLoop, promise: EventLoopPromise<Void>)])>((false, []))
        private let released = DispatchSemaphore(value: 0)

        init(blocking: Bool) { self.blocking = blocking }

        func loadIndex() async throws -> [StoredSessionEntry] { try await stored.loadIndex() }
        func loadSession(_ id: SessionID) async throws -> StoredSession? { try await stored.loadSession(id) }
        var services: [any Service] { [] }
        /// How many times the store was closed.
        let closes = Mutex(0)
        func close() async throws { closes.withLock { $0 += 1 } }
        func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
            guard state.withLock({ $0.hanging }) else { return stored.commit(writes, on: loop) }
            if blocking {
                released.wait()
                return stored.commit(writes, on: loop)
            }
            let promise = loop.makePromise(of: Void.self)
            state.withLock { $0.held.append((writes, loop, promise)) }
            return promise.futureResult
        }

        func hang() { state.withLock { $0.hanging = true } }

        /// How many commits the store holds now.
        var heldCount: Int { state.withLock { $0.held.count } }

        /// Ends the hang, if any (so a test that failed midway still lets the store's thread go).
        func resume() {
            let (wasHanging, held) = state.withLock { state in
                defer { (state.hanging, state.held) = (false, []) }
                return (state.hanging, state.held)
            }
            if blocking, wasHanging { released.signal() }
            for batch in held { batch.promise.completeWith(stored.commit(batch.writes, on: batch.loop)) }
        }
    }

    static func trackIDs(_ view: SessionView) -> [String] {
        [view.nowPlaying?.item.track.id].compactMap { $0 } + view.queue.map(\.track.id)
    }

    @Test(.timeLimit(.minutes(1))) func aChangeWaitingOnARefusingStoreIsAnsweredAtOnceAndStoredOnceTheStoreIsBack() async throws {
        let store = CommitFailureTests.RefusingStore()
        store.refusing.withLock { $0 = false }
        try await TestServer.with(store: store) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            // The server does not know yet: the add is applied, and its commit is refused.
            store.refusing.withLock { $0 = true }
            let started = ContinuousClock.now
            let add = try await server.api.add(host.token, id, testTrack(1))
            #expect(add.status == 503)
            #expect(add.errorCode == .unavailable)
            #expect(add.text.contains("applied on this server"), "says the change may still be stored: \(add.text)")
            #expect(ContinuousClock.now - started < .seconds(5), "answered when the store refused, not when it came back")

            let read = try await server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: host.token)
            #expect(read.status == 503, "the add is not stored: no read shows it yet")
            let health = try await server.api.request("GET", "/healthz")
            #expect(health.status == 503, "a balancer's check sees the server cannot take commands: \(health.text)")
            #expect(try health.decode(Health.self).reason == "the store does not take writes")

            store.refusing.withLock { $0 = false }
            try await eventually("the add is stored and shown once the store is back", timeout: .seconds(10)) {
                guard let view = try? await server.api.view(host.token, id) else { return false }
                return Self.trackIDs(view) == ["track-1"]
            }
            #expect(try await server.api.request("GET", "/healthz").status == 200)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aStoreThatHangsLongerThanTheLimitIsRefusingUntilItAnswers(blockingItsThread: Bool) async throws {
        let store = HangingStore(blocking: blockingItsThread)
        // A 5 s limit, so a refusal "at once" may take 4 s on a busy CI machine (2 cores, ~1,150 tests at once).
        try await TestServer.with(store: store, configure: { $0.commitTiming.hangLimit = .seconds(5) }) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            store.hang()
            defer { store.resume() }
            let started = ContinuousClock.now
            let add = try await server.api.add(host.token, id, testTrack(1))
            let waited = ContinuousClock.now - started
            #expect(add.status == 503)
            #expect(add.text.contains("applied on this server"), "\(add.text)")
            #expect(waited >= .seconds(5), "a slow commit is waited for up to the limit")
            #expect(waited < .seconds(9), "and not longer: \(waited)")

            let refusedAt = ContinuousClock.now
            let next = try await server.api.add(host.token, id, testTrack(2))
            #expect(next.status == 503)
            #expect(next.text.contains("not applied"), "a new change is refused while the store hangs: \(next.text)")
            // A loaded machine can take a few seconds over one request; the limit is longer than that.
            #expect(ContinuousClock.now - refusedAt < .seconds(4), "at once, not after the limit")
            let read = try await server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: host.token)
            #expect(read.status == 503)
            let create = try await server.api.send("POST", "/api/v1/sessions", token: host.token, json: CreateSessionRequest())
            #expect(create.status == 503, "nothing is created while the store hangs: its first answer would wait for it")

            store.resume()
            try await eventually("the held add is stored and the server takes changes again", timeout: .seconds(10)) {
                try await server.api.add(host.token, id, testTrack(3)).status == 201
            }
            #expect(Self.trackIDs(try await server.api.view(host.token, id)) == ["track-1", "track-3"], "the refused add was never applied")
        }
    }

    // A stop that waited for the hung commit would hold the run: the time limit says so.
    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aStoppingServerGivesUpOnAHungCommitAndLeavesTheStoreOpenUnderIt(blockingItsThread: Bool) async throws {
        let store = HangingStore(blocking: blockingItsThread)
        defer { store.resume() }
        let pipeline = CommitPipeline(store: store, logger: Logger(label: "test"), timing: .init(linger: .zero, hangLimit: .milliseconds(200)))
        let receiver = CommitFailureTests.Receiver()
        store.hang()
        pipeline.submit([CommitFailureTests.record(1)], receipt: (receiver, 1))
        let closed = await pipeline.stop()
        #expect(!closed, "a batch given up on is still being written")
        #expect(store.closes.withLock { $0 } == 0, "closing a store under a commit in progress is not safe")

        // The hung batch ends after all: nothing more is written, nobody is told it is stored.
        pipeline.submit([CommitFailureTests.record(2)], receipt: (receiver, 2))
        store.resume()
        try await Task.sleep(for: .milliseconds(200))
        let lsns = try await store.stored.loadSession(CommitFailureTests.id)?.records.map(\.lsn)
        #expect(lsns == nil || lsns == [1], "only the batch in flight may be stored: \(String(describing: lsns))")
        #expect(receiver.storedLsn.withLock { $0 } == 0)
    }

    @Test(.timeLimit(.minutes(1))) func aNewSessionsFirstAnswerWaitsThroughARefusingStore() async throws {
        let store = CommitFailureTests.RefusingStore()
        store.refusing.withLock { $0 = false }
        try await TestServer.with(store: store) { server in
            let host = try await server.api.guest("Host")
            // The server does not know yet: the session is made, and its first commit refused.
            store.refusing.withLock { $0 = true }
            let create = Task { try await server.api.send("POST", "/api/v1/sessions", token: host.token, json: CreateSessionRequest()) }
            try await eventually("the store refused the new session twice", timeout: .seconds(10)) { store.attempts.withLock { $0 } >= 2 }
            try await Task.sleep(for: .milliseconds(200))
            store.refusing.withLock { $0 = false }
            let answer = try await create.value
            #expect(answer.status == 201, "the session exists: the answer waits for it to be stored, not a 503 that invites a second one: \(answer.text)")
            let id = try answer.decode(SessionView.self).session.id
            #expect(try await server.api.view(host.token, id).session.id == id)
        }
    }
}
