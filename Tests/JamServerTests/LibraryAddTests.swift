import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// Library tracks added to a queue are the library's own: a client names one, the server
/// fills in what it knows of it.
@Suite struct LibraryAddTests {
    @Test func aLibraryTrackIsQueuedAsTheLibraryHasItWhateverTheClientSaid() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let found = try await server.api.request("GET", "/api/v1/search?q=NIGHT%20b", token: host.token)
            let known = try #require(try found.decode(SearchResults.self).tracks.first)
            // A stale or doctored copy: no duration (it would never end), another name.
            let claimed = Track(id: known.id, name: "Something else", artist: "Nobody", durationMs: nil, source: .library)
            let added = try await server.api.add(host.token, id, claimed)
            #expect(added.status == 201, "\(added.text)")
            let playing = try #require(try await server.api.view(host.token, id).nowPlaying)
            #expect(playing.item.track == known)
            #expect(playing.item.track.durationMs != nil)
        }
    }

    @Test func aTrackTheLibraryDoesNotHoldIsRefusedAndNothingIsQueued() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let refused = try await server.api.add(host.token, id, Track(id: "no-such-track", name: "Ghost", artist: "A", durationMs: 1_000, source: .library))
            #expect(refused.status == 404)
            #expect(refused.errorCode == .notFound)
            #expect(refused.text.contains("no track no-such-track in the library"), "\(refused.text)")
            let view = try await server.api.view(host.token, id)
            #expect(view.nowPlaying == nil)
            #expect(view.queue.isEmpty)
            // Over the socket, the same answer.
            let socket = TestSocket(server: server, session: id, token: host.token)
            try await socket.next(.stateSync)
            socket.send(.addToQueue(AddToQueue(track: Track(id: "no-such-track", name: "Ghost", artist: "A", source: .library), nonce: "n1")), id: "c1")
            let refusal = try await socket.next(.error)
            guard case .error(let error) = refusal.event else { throw TestFailure("not an error") }
            #expect(error.id == "c1")
            #expect(error.code == .notFound)
            await socket.close()
            // Tracks from elsewhere are not the library's to check.
            #expect(try await server.api.add(host.token, id, testTrack(1)).status == 201)
        }
    }

    @Test func aRetriedAddIsAnsweredWithItsFirstItemWhateverItsTrackNowIs() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let found = try await server.api.request("GET", "/api/v1/search?q=NIGHT%20b", token: host.token)
            let known = try #require(try found.decode(SearchResults.self).tracks.first)
            let first = try await server.api.add(host.token, id, known, nonce: "retry-1")
            #expect(first.status == 201)
            let item = try first.decode(QueueItem.self)
            // The same add again, its track since gone from the library (a rescan): still a retry.
            let gone = Track(id: "left-the-library", name: known.name, artist: known.artist, source: .library)
            let retried = try await server.api.add(host.token, id, gone, nonce: "retry-1")
            #expect(retried.status == 200, "\(retried.text)")
            #expect(try retried.decode(QueueItem.self).id == item.id)
        }
    }

    @Test func aServerWithAnEmptyLibraryRefusesLibraryTracks() async throws {
        let empty = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: empty) }
        try await TestServer.with(configure: { $0.musicFolders = [empty] }) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let refused = try await server.api.add(host.token, id, Track(id: "any", name: "Any", artist: "A", durationMs: 1_000, source: .library))
            #expect(refused.status == 404)
            #expect(refused.text.contains("this server has no music library"), "\(refused.text)")
        }
    }
}
