import Foundation
import HTTPTypes
import Hummingbird
import JamMedia
import JamProtocol
import JamTestSupport
import NIOCore
import Synchronization
import Testing

@testable import JamServer

/// `GET|HEAD /api/v1/tracks/{id}/audio`: content types and byte ranges as players use them.
@Suite struct AudioStreamingTests {
    /// A demo track's id and the bytes of its file.
    static func demoTrack() throws -> (id: String, bytes: Data) {
        let library = MusicLibrary.scan([try DemoFolder.shared()])
        let track = try #require(library.tracks.first { $0.title == "Night Bus" })
        return (track.id, try Data(contentsOf: track.file))
    }

    @Test func theWholeFileComesWithItsTypeAndLength() async throws {
        let (id, bytes) = try Self.demoTrack()
        try await TestServer.with { server in
            let response = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "audio/wav")
            #expect(response.headers["accept-ranges"] == "bytes")
            #expect(response.headers["content-length"] == String(bytes.count))
            #expect(response.body == bytes)
        }
    }

    @Test func aRangeIsAnsweredWith206AndExactlyThoseBytes() async throws {
        let (id, bytes) = try Self.demoTrack()
        let size = bytes.count
        try await TestServer.with { server in
            let cases: [(header: String, range: ClosedRange<Int>)] = [
                ("bytes=0-99", 0...99),
                ("bytes=1000-1999", 1000...1999),
                ("bytes=\(size - 10)-", (size - 10)...(size - 1)),
                ("bytes=-256", (size - 256)...(size - 1)),
                // A last byte past the end is cut to the end.
                ("bytes=\(size - 5)-\(size + 1000)", (size - 5)...(size - 1)),
            ]
            for (header, range) in cases {
                let response = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio", headers: ["Range": header])
                #expect(response.status == 206, "\(header)")
                #expect(response.headers["content-range"] == "bytes \(range.lowerBound)-\(range.upperBound)/\(size)", "\(header)")
                #expect(response.headers["content-length"] == String(range.count), "\(header)")
                #expect(response.body == bytes.subdata(in: range.lowerBound..<(range.upperBound + 1)), "\(header)")
            }
        }
    }

    @Test func aRangeOutsideTheFileIs416WithTheSize() async throws {
        let (id, bytes) = try Self.demoTrack()
        try await TestServer.with { server in
            for header in ["bytes=\(bytes.count)-", "bytes=\(bytes.count + 10)-\(bytes.count + 20)", "bytes=-0"] {
                let response = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio", headers: ["Range": header])
                #expect(response.status == 416, "\(header)")
                #expect(response.headers["content-range"] == "bytes */\(bytes.count)", "\(header)")
            }
        }
    }

    @Test func rangesThatCannotBeServedAsOneGetTheWholeFile() async throws {
        let (id, bytes) = try Self.demoTrack()
        try await TestServer.with { server in
            for header in ["bytes=0-9,20-29", "items=0-9", "bytes=20-10", "bytes=abc"] {
                let response = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio", headers: ["Range": header])
                #expect(response.status == 200, "\(header)")
                #expect(response.body.count == bytes.count, "\(header)")
            }
            // A range for another version of the file is not applied.
            let stale = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio", headers: ["Range": "bytes=0-9", "If-Range": "\"other\""])
            #expect(stale.status == 200)
            let current = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio")
            let fresh = try await server.api.request(
                "GET", "/api/v1/tracks/\(id)/audio", headers: ["Range": "bytes=0-9", "If-Range": current.headers["etag"] ?? ""])
            #expect(fresh.status == 206)
        }
    }

    @Test func headTellsTheLengthWithoutABody() async throws {
        let (id, bytes) = try Self.demoTrack()
        try await TestServer.with { server in
            let response = try await server.api.request("HEAD", "/api/v1/tracks/\(id)/audio")
            #expect(response.status == 200)
            #expect(response.headers["content-length"] == String(bytes.count))
            #expect(response.body.isEmpty)
        }
    }

    @Test func aRangeOnAHeadIsIgnored() async throws {
        let (id, bytes) = try Self.demoTrack()
        try await TestServer.with { server in
            let response = try await server.api.request("HEAD", "/api/v1/tracks/\(id)/audio", headers: ["Range": "bytes=0-9"])
            #expect(response.status == 200)
            #expect(response.headers["content-length"] == String(bytes.count))
            #expect(response.headers["content-range"] == nil)
        }
    }

    @Test func aCopyTheClientHoldsIsNotSentAgain() async throws {
        let (id, bytes) = try Self.demoTrack()
        try await TestServer.with { server in
            let path = "/api/v1/tracks/\(id)/audio"
            let eTag = try #require(try await server.api.request("GET", path).headers["etag"])
            for (method, header) in [("GET", eTag), ("GET", "W/\(eTag)"), ("GET", "\"other\", \(eTag)"), ("GET", "*"), ("HEAD", eTag)] {
                let response = try await server.api.request(method, path, headers: ["If-None-Match": header, "Range": "bytes=0-9"])
                #expect(response.status == 304, "\(method) \(header)")
                #expect(response.body.isEmpty, "\(method) \(header)")
                #expect(response.headers["etag"] == eTag, "\(method) \(header)")
                #expect(response.headers["content-type"] == nil, "a 304 carries validators, not the body's metadata")
            }
            let changed = try await server.api.request("GET", path, headers: ["If-None-Match": "\"other\""])
            #expect(changed.status == 200)
            #expect(changed.body == bytes)
        }
    }

    /// A song rewritten in place at the same size, its modification time put back (a tag
    /// editor that keeps it, `touch -r`): a copy the client holds is no longer good.
    @Test func aFileRewrittenInPlaceGetsAnotherETag() async throws {
        let folder = try TestFolders.make("rewritten")
        let (_, bytes) = try Self.demoTrack()
        let song = folder.appendingPathComponent("song.wav")
        try bytes.write(to: song)
        try await TestServer.with(configure: { $0.musicFolders = [folder]; $0.libraryRescanSeconds = 0 }) { server in
            let id = try #require(MusicLibrary.scan([folder]).tracks.first?.id)
            let path = "/api/v1/tracks/\(id)/audio"
            let before = try await server.api.request("GET", path)
            let eTag = try #require(before.headers["etag"])
            let modified = try #require(try FileManager.default.attributesOfItem(atPath: song.path)[.modificationDate] as? Date)
            try await Task.sleep(for: .milliseconds(50)) // past the file system's clock tick
            let handle = try FileHandle(forWritingTo: song)
            try handle.seek(toOffset: UInt64(bytes.count - 16))
            try handle.write(contentsOf: Data(repeating: 0x7F, count: 16))
            try handle.close()
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: song.path)
            let after = try await server.api.request("GET", path, headers: ["If-None-Match": eTag])
            #expect(after.status == 200, "the old copy was called current")
            #expect(after.headers["etag"] != eTag)
            #expect(after.body.suffix(16) == Data(repeating: 0x7F, count: 16))
        }
    }

    /// A song rewritten in place while a player streams it (a tag editor, say): the response
    /// ends with an error, so the connection closes, rather than finishing short of its length
    /// and leaving the player waiting on an open connection for bytes that will not come.
    @Test func aFileCutShortWhileItIsServedEndsInAnError() async throws {
        let folder = try TestFolders.make("cut-short")
        let song = folder.appendingPathComponent("song.wav")
        // Large enough that the reader, which reads a few chunks ahead, meets the cut.
        let size = 16 * 1024 * 1024
        try Data(repeating: 0x41, count: size).write(to: song)
        let file = try #require(await ServedFile.at(song.path))
        let writer = CuttingWriter(file: song, cutTo: 200 * 1024)
        await #expect(throws: JamError.self) {
            try await file.body(song.path, range: 0...(size - 1)).write(writer)
        }
        #expect(writer.log.written < size)
        #expect(!writer.log.finished, "a response cut short was finished as if whole")
    }

    /// Someone who can write to the music folder swaps a scanned song for a link to another
    /// file (the server's database, say): the route serves no byte of it.
    @Test func aSongSwappedForALinkIsNotServed() async throws {
        let folder = try TestFolders.make("swapped")
        let (_, bytes) = try Self.demoTrack()
        let song = folder.appendingPathComponent("song.wav")
        try bytes.write(to: song)
        let secret = folder.deletingLastPathComponent().appendingPathComponent("secret-\(UUID().uuidString).txt")
        try Data(repeating: 0x53, count: bytes.count).write(to: secret)
        defer { try? FileManager.default.removeItem(at: secret) }
        try await TestServer.with(configure: { $0.musicFolders = [folder]; $0.libraryRescanSeconds = 0 }) { server in
            let id = try #require(MusicLibrary.scan([folder]).tracks.first?.id)
            let before = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio")
            #expect(before.body == bytes)
            try FileManager.default.removeItem(at: song)
            try FileManager.default.createSymbolicLink(at: song, withDestinationURL: secret)
            for range in [nil, "bytes=0-99"] {
                let after = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio", headers: range.map { ["Range": $0] } ?? [:])
                #expect(after.status == 404, "\(range ?? "whole"): \(after.status)")
                #expect(!after.body.contains(0x53), "the linked file's bytes were served")
            }
        }
    }

    @Test func anUnknownTrackIs404WithTheReason() async throws {
        try await TestServer.with { server in
            let response = try await server.api.request("GET", "/api/v1/tracks/lib-0000000000000000/audio")
            #expect(response.status == 404)
            #expect(response.errorCode == .notFound)
            #expect(response.text.contains("lib-0000000000000000"))
        }
    }

    @Test(arguments: [
        ("bytes=0-0", 10, ByteRange.partial(0...0)),
        ("bytes=5-", 10, .partial(5...9)),
        ("bytes=-3", 10, .partial(7...9)),
        ("bytes=-30", 10, .partial(0...9)),
        ("bytes=2-100", 10, .partial(2...9)),
        ("bytes=10-", 10, .unsatisfiable),
        ("bytes=-1", 0, .unsatisfiable),
        ("BYTES = 1-2", 10, .whole),
        ("Bytes=1-2", 10, .partial(1...2)),
        ("bytes=3-2", 10, .whole),
        ("bytes=1-2,4-5", 10, .whole),
        ("bytes=x-2", 10, .whole),
        ("pages=1-2", 10, .whole),
        // Positions too long for an Int still name the end, or lie past it.
        ("bytes=0-99999999999999999999999", 10, .partial(0...9)),
        ("bytes=99999999999999999999999-", 10, .unsatisfiable),
        ("bytes=-99999999999999999999999", 10, .partial(0...9)),
        ("bytes=+1-2", 10, .whole),
    ] as [(String, Int, ByteRange)])
    func rangeHeadersResolveAsTheRFCSays(header: String, size: Int, expected: ByteRange) {
        #expect(ByteRange(header: header, size: size) == expected)
    }
}

/// A response body writer that cuts `file` to `cutTo` bytes after the first chunk it is given,
/// and logs what it was given.
private struct CuttingWriter: ResponseBodyWriter {
    struct Log: Equatable {
        var written = 0
        var finished = false
    }

    /// The log, kept where the writer's copies (it is consumed by `finish`) share it.
    final class Shared: Sendable {
        let state = Mutex(Log())
    }

    let file: URL
    let cutTo: UInt64
    let shared = Shared()

    init(file: URL, cutTo: Int) {
        self.file = file
        self.cutTo = UInt64(cutTo)
    }

    var log: Log { shared.state.withLock { $0 } }

    mutating func write(_ buffer: ByteBuffer) async throws {
        let first = shared.state.withLock { log in
            defer { log.written += buffer.readableBytes }
            return log.written == 0
        }
        guard first else { return }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.truncate(atOffset: cutTo)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        shared.state.withLock { $0.finished = true }
    }
}
