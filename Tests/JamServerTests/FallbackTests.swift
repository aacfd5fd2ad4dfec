import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// `fallback` on: when the queue runs dry the session goes on with a library shuffle.
@Suite struct FallbackPlaybackTests {
    static func prepared(_ envelope: ServerEnvelope) -> PlayPrepare? {
        if case .playPrepare(let prepare) = envelope.event { prepare } else { nil }
    }

    @Test func aDryQueueGoesOnWithTheLibraryShuffleWithoutRepeats() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let view = try await server.api.create(host.token, CreateSessionRequest(settings: SettingsPatch(fallback: true)))
            let socket = TestSocket(server: server, session: view.session.id, token: host.token)
            try await socket.next(.stateSync)
            socket.send(.play, id: "play")
            let first = try #require(Self.prepared(try await socket.next(.playPrepare)))
            #expect(first.item.track.source == .library)
            #expect(first.item.addedBy.displayName == "Library shuffle")
            try await socket.next(.playCommit)

            // Near the end the next shuffled track is prepared to start exactly where this one ends.
            let duration = try #require(first.item.track.durationMs)
            socket.send(.seek(Seek(positionMs: duration - 700)), id: "seek")
            let seek = try await socket.next(.seek)
            guard case .seek(let moved) = seek.event else { throw TestFailure("not a seek") }
            let second = try #require(Self.prepared(try await socket.next(.playPrepare, timeout: .seconds(3))))
            #expect(second.startAt == moved.atMs + 700)
            #expect(second.item.track.source == .library)
            #expect(second.item.track.id != first.item.track.id)
            try await socket.next("the second track starts", timeout: .seconds(3)) { $0.event.type == .playCommit && $0.epoch == second.epoch }

            // Skipping through: no track comes back while it is among the last six played.
            var played = [first.item.track.id, second.item.track.id]
            for n in 0..<10 {
                socket.send(.skip(Skip()), id: "skip-\(n)")
                let next = try #require(Self.prepared(try await socket.next(.playPrepare)))
                played.append(next.item.track.id)
            }
            for index in played.indices {
                let window = played[max(0, index - 5)..<index]
                #expect(!window.contains(played[index]), "\(played[index]) repeated within six tracks: \(played)")
            }
            await socket.close()
        }
    }

    @Test func aShuffledItemIsNamedByItsOwnIDOverRESTAndRefusedAsOnTheSocket() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let view = try await server.api.create(host.token, CreateSessionRequest(settings: SettingsPatch(fallback: true)))
            let id = view.session.id
            #expect(try await server.api.send("PATCH", "/api/v1/sessions/\(id)", token: host.token, json: UpdateSessionRequest(playback: .play)).status == 200)
            let playing = try #require(try await server.api.view(host.token, id).nowPlaying?.item)
            #expect(!playing.id.isUUID, "the shuffle's item ids are its own: \(playing.id)")

            let vote = try await server.api.send("PUT", "/api/v1/sessions/\(id)/queue/\(playing.id)/vote", token: host.token, json: VoteRequest(value: 1))
            #expect(vote.status == 409, "\(vote.text)")
            #expect(vote.errorCode == .conflict)
            let socket = TestSocket(server: server, session: id, token: host.token)
            try await socket.next(.stateSync)
            socket.send(.vote(Vote(itemId: playing.id, value: 1)), id: "vote")
            let onSocket = try #require(try await socket.next(.error).error)
            #expect(vote.text.contains(onSocket.message), "the same refusal both ways: \(vote.text) / \(onSocket.message)")
            await socket.close()
            #expect(try await server.api.view(host.token, id).nowPlaying?.item.id == playing.id, "nothing changed")
        }
    }

    @Test func withoutFallbackADryQueueStops() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let view = try await server.api.create(host.token)
            let socket = TestSocket(server: server, session: view.session.id, token: host.token)
            try await socket.next(.stateSync)
            socket.send(.play, id: "play")
            let refused = try await socket.next(.error)
            guard case .error(let error) = refused.event else { throw TestFailure("not an error") }
            #expect(error.code == .conflict)
            #expect(error.message.contains("queue is empty"))
            await socket.close()
        }
    }

    @Test func theShuffleIsReproducibleCoversTheLibraryAndPassesOverRecentTracks() {
        let tracks = (0..<20).map { Track(id: "t\($0)", name: "T\($0)", artist: "A", durationMs: 1000, source: .library) }
        var a = FallbackShuffle(tracks: tracks, seed: 7)
        var b = FallbackShuffle(tracks: tracks, seed: 7)
        let round = a.next(20, avoiding: [])
        #expect(round == b.next(20, avoiding: []))
        #expect(Set(round.map(\.id)).count == 20)
        var c = FallbackShuffle(tracks: tracks, seed: 8)
        #expect(c.next(20, avoiding: []) != round)
        let recent = Set((0..<15).map { "t\($0)" })
        for _ in 0..<50 {
            let picked = a.next(2, avoiding: recent)
            #expect(picked.count == 2)
            #expect(picked.allSatisfy { !recent.contains($0.id) })
        }
    }

    @Test func aLibrarySmallerThanTheRecentWindowRepeatsRatherThanFallingSilent() {
        let tracks = (0..<2).map { Track(id: "t\($0)", name: "T\($0)", artist: "A", durationMs: 1000, source: .library) }
        var shuffle = FallbackShuffle(tracks: tracks, seed: 1)
        #expect(shuffle.next(2, avoiding: ["t0", "t1"]).count == 2)
        var empty = FallbackShuffle(tracks: [], seed: 1)
        #expect(empty.next(2, avoiding: []).isEmpty)
    }

    @Test func drawingFromAHugeLibraryTouchesOnlyWhatItDraws() {
        let tracks = (0..<200_000).map { Track(id: "t\($0)", name: "T", artist: "A", durationMs: 1000, source: .library) }
        var shuffle = FallbackShuffle(tracks: tracks, seed: 3)
        #expect(shuffle.next(2, avoiding: []).count == 2)
        // No up-front shuffle of the whole library: the first tracks cost a couple of swaps.
        #expect(shuffle.swapsHeld <= 2)
    }
}
