import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// Music added to or removed from a folder while the server runs.
@Suite struct LibraryRescanTests {
    static func search(_ server: TestServer, _ token: String, _ query: String) async throws -> [Track] {
        let escaped = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
        return try await server.api.request("GET", "/api/v1/search?q=\(escaped)&limit=200", token: token).decode(SearchResults.self).tracks
    }

    /// Waits until `condition` holds for the search results of `query`.
    static func searchUntil(_ server: TestServer, _ token: String, _ query: String, _ condition: ([Track]) -> Bool) async throws -> [Track] {
        var last: [Track] = []
        return try await JamTestSupport.eventually(
            "the library never showed what was expected for \"\(query)\": \(last.map(\.name))", timeout: .seconds(8), every: .milliseconds(100)
        ) {
            last = try await search(server, token, query)
            return condition(last) ? last : nil
        }
    }

    @Test func aRescanOffersNewMusicWithItsCoverAndDropsRemovedMusic() async throws {
        let folder = try TestFolders.make("rescan")
        let demo = try DemoFolder.shared()
        let first = try #require(try FileManager.default.contentsOfDirectory(at: demo, includingPropertiesForKeys: nil).first { $0.pathExtension == "wav" })
        try FileManager.default.copyItem(at: first, to: folder.appendingPathComponent(first.lastPathComponent))
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("JamMediaTests/Fixtures")
        try await TestServer.with(configure: { $0.musicFolders = [folder]; $0.libraryRescanSeconds = 1 }) { server in
            let alice = try await server.api.guest("Alice")
            let before = try await Self.search(server, alice.token, "")
            #expect(before.count == 1)

            // A FLAC with tags and a cover is dropped into the folder.
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent("tone.flac"), to: folder.appendingPathComponent("new.flac"))
            let found = try await Self.searchUntil(server, alice.token, "") { $0.count == 2 }
            let flac = try #require(found.first { $0.id != before.first?.id })
            #expect(flac.source == .library)
            let artwork = try #require(flac.artworkURL)
            let cover = try await server.api.request("GET", artwork)
            #expect(cover.status == 200)
            #expect(cover.headers["content-type"] == "image/png")
            // Bytes from a file: shown as an image, never run as a page of this origin.
            #expect(cover.headers["content-security-policy"] == "default-src 'none'; sandbox")
            #expect(cover.headers["x-content-type-options"] == "nosniff")
            let audio = try await server.api.request("GET", "/api/v1/tracks/\(flac.id)/audio", headers: ["Range": "bytes=0-3"])
            #expect(audio.status == 206)
            #expect(audio.headers["content-type"] == "audio/flac")
            #expect(audio.body == Data("fLaC".utf8))
            #expect(audio.headers["x-content-type-options"] == "nosniff")

            // Added to a session after the rescan, it keeps its cover, as tracks found at start do.
            let session = try await server.api.create(alice.token).session.id
            var asSent = flac
            asSent.artworkURL = nil
            let added = try await server.api.add(alice.token, session, asSent)
            #expect(added.status == 201, "\(added.text)")
            // The first song of a session starts once its devices had their time to prepare.
            let playing = try await eventually("the song started") {
                try await server.api.view(alice.token, session).nowPlaying?.item.track
            }
            #expect(playing.id == flac.id)
            #expect(playing.artworkURL == artwork)

            // The file goes away: so does the track, and its audio.
            try FileManager.default.removeItem(at: folder.appendingPathComponent("new.flac"))
            _ = try await Self.searchUntil(server, alice.token, "") { $0.map(\.id) == before.map(\.id) }
            let gone = try await server.api.request("GET", "/api/v1/tracks/\(flac.id)/audio")
            #expect(gone.status == 404)
        }
    }

    /// The cover of the library's one track.
    static func artwork(_ server: TestServer) async throws -> Data {
        let alice = try await server.api.guest("Alice")
        let track = try #require(try await search(server, alice.token, "").first)
        let cover = try await server.api.request("GET", try #require(track.artworkURL))
        #expect(cover.status == 200)
        return cover.body
    }

    @Test func aCoverIsReadOnceAndReadAgainAfterTheNextScan() async throws {
        let folder = try TestFolders.make("covers")
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("JamMediaTests/Fixtures")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("tone.wav"), to: folder.appendingPathComponent("tone.wav"))
        let first = try Data(contentsOf: fixtures.appendingPathComponent("cover.png"))
        let second = first + Data("another picture".utf8)
        try first.write(to: folder.appendingPathComponent("cover.png"))
        // No rescans: a picture replaced beside the track is not read again.
        try await TestServer.with(configure: { $0.musicFolders = [folder]; $0.libraryRescanSeconds = 0 }) { server in
            #expect(try await Self.artwork(server) == first)
            try second.write(to: folder.appendingPathComponent("cover.png"))
            #expect(try await Self.artwork(server) == first, "kept from the first read")
        }
        // A scan that finds the same tracks still lets a new picture show.
        try first.write(to: folder.appendingPathComponent("cover.png"))
        try await TestServer.with(configure: { $0.musicFolders = [folder]; $0.libraryRescanSeconds = 1 }) { server in
            #expect(try await Self.artwork(server) == first)
            try second.write(to: folder.appendingPathComponent("cover.png"))
            _ = try await JamTestSupport.eventually("the new picture was never served", timeout: .seconds(8), every: .milliseconds(200)) {
                try await Self.artwork(server) == second ? true : nil
            }
        }
    }

    @Test func shuttingDownDoesNotWaitForTheNextRescan() async throws {
        let folder = try TestFolders.make("rescan")
        let stopping = try await TestServer.with(configure: { $0.musicFolders = [folder]; $0.libraryRescanSeconds = 3600 }) { server in
            _ = try await server.api.guest("Alice")
            return ContinuousClock.now
        }
        #expect(ContinuousClock.now - stopping < .seconds(20))
    }

    @Test func aTrackWithoutACoverHasNoArtwork() async throws {
        try await TestServer.with { server in
            let alice = try await server.api.guest("Alice")
            let track = try #require(try await Self.search(server, alice.token, "night bus").first)
            #expect(track.artworkURL == nil)
            let artwork = try await server.api.request("GET", "/api/v1/tracks/\(track.id)/artwork")
            #expect(artwork.status == 404)
            #expect(artwork.errorCode == .notFound)
        }
    }
}
