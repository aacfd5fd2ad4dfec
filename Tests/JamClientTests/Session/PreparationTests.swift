import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

/// A member's device gets the current and next track ready first, the rest after.
@Suite struct PreparationTests {
    final class RecordingPreparer: TrackPreparer {
        let prepared = Mutex<[String]>([])

        func prepare(_ track: Track) async throws {
            // Loading takes a little while, as it would on a phone.
            try await Task.sleep(for: .milliseconds(20))
            prepared.withLock { $0.append(track.id) }
        }
    }

    /// Prepares every track at once except one, whose download never ends until cancelled.
    final class StuckPreparer: TrackPreparer {
        let stuck: String
        let started = Mutex<[String]>([])
        let prepared = Mutex<[String]>([])
        let cancelled = Mutex<[String]>([])

        init(stuck: String) { self.stuck = stuck }

        func prepare(_ track: Track) async throws {
            started.withLock { $0.append(track.id) }
            if track.id == stuck {
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch {
                    cancelled.withLock { $0.append(track.id) }
                    throw error
                }
            }
            prepared.withLock { $0.append(track.id) }
        }
    }

    @Test("the current and next tracks are ready before the rest")
    func theCurrentAndNextTracksAreReadyBeforeTheRest() async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana")
            var api = JamAPI(server: URL(string: server.baseURL)!)
            let identity = try await api.signIn(displayName: "Gil")
            let view = try await api.join(code: created.session.joinCode)
            let recorder = RecordingPreparer()
            let participant = Participant(api: api, sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(), trackPreparer: recorder)
            try await running([host]) {
                // The queue exists before Gil connects, so his first state shows all of it at once.
                for n in 1...5 { await host.store.add(song(n)) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await participant.run() }
                    // A wait for progress, not a limit on it: on a loaded machine the sign-in,
                    // join and first state can take seconds before any track is handed over.
                    let deadline = ContinuousClock.now + .seconds(30)
                    while recorder.prepared.withLock({ $0.count }) < 5 && ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    let order = recorder.prepared.withLock { $0 }
                    #expect(Array(order.prefix(2)) == ["song-1", "song-2"])
                    #expect(Set(order) == Set((1...5).map { "song-\($0)" }))
                    #expect(order.count == 5)
                    group.cancelAll()
                }
            }
        }
    }

    @Test("a skip while the current track still downloads gets the new song ready at once")
    func aSkipDoesNotWaitForTheOldSongsDownload() async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana")
            var api = JamAPI(server: URL(string: server.baseURL)!)
            let identity = try await api.signIn(displayName: "Gil")
            let view = try await api.join(code: created.session.joinCode)
            let preparer = StuckPreparer(stuck: "song-1")
            let participant = Participant(api: api, sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(), trackPreparer: preparer)
            try await running([host]) {
                for n in 1...3 { await host.store.add(song(n)) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await participant.run() }
                    try await eventually("song-1 starts downloading", timeout: .seconds(30)) {
                        preparer.started.withLock { $0.contains("song-1") }
                    }
                    await host.store.skip()
                    try await eventually("song-2 is ready although song-1 never downloaded", timeout: .seconds(30)) {
                        preparer.prepared.withLock { $0.contains("song-2") }
                    }
                    try await eventually("song-1's download stops", timeout: .seconds(30)) {
                        preparer.cancelled.withLock { $0.contains("song-1") }
                    }
                    #expect(!preparer.prepared.withLock { $0.contains("song-1") })
                    group.cancelAll()
                }
            }
        }
    }
}
