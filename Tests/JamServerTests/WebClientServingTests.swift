import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// The browser client's files, join links and invite QR codes.
@Suite struct WebClientServingTests {
    @Test func thePageIsServedAtTheRootAndForEveryJoinLink() async throws {
        try await TestServer.with { server in
            let root = try await server.api.request("GET", "/")
            #expect(root.status == 200)
            #expect(root.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(root.headers["content-security-policy"]?.contains("default-src 'self'") == true)
            #expect(root.text.contains("<html"))
            let link = try await server.api.request("GET", "/j/4KX9QZ")
            #expect(link.status == 200)
            #expect(link.body == root.body)
            #expect(link.headers["content-security-policy"] == root.headers["content-security-policy"])
            let preview = try await server.api.request("HEAD", "/j/4KX9QZ")
            #expect(preview.status == 200)
            #expect(preview.headers["content-type"]?.hasPrefix("text/html") == true)
        }
    }

    @Test func unknownFilesAre404AndPathsOutsideTheClientAreRefused() async throws {
        try await TestServer.with { server in
            let missing = try await server.api.request("GET", "/no-such-file.js")
            #expect(missing.status == 404)
            let outside = try await server.api.request("GET", "/js/%2e%2e/%2e%2e/Package.swift")
            #expect(outside.status == 400)
        }
    }

    @Test func aWebRootServesItsOwnFilesButNoDotfileNorWhatALinkLeadsTo() async throws {
        let root = try TestFolders.make("web-root")
        try Data("<html>here</html>".utf8).write(to: root.appendingPathComponent("index.html"))
        try FileManager.default.createDirectory(at: root.appendingPathComponent(".git"), withIntermediateDirectories: true)
        try Data("[core]".utf8).write(to: root.appendingPathComponent(".git/config"))
        try Data("SECRET=1".utf8).write(to: root.appendingPathComponent(".env"))
        let outside = try TestFolders.make("outside")
        try Data("private".utf8).write(to: outside.appendingPathComponent("notes.txt"))
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("notes.txt"), withDestinationURL: outside.appendingPathComponent("notes.txt"))
        // A folder whose index.html leads out of the root.
        try FileManager.default.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("sub/index.html"), withDestinationURL: outside.appendingPathComponent("notes.txt"))
        try await TestServer.with(configure: { $0.webRoot = root }) { server in
            #expect(try await server.api.request("GET", "/").text.contains("here"))
            for path in ["/.env", "/.git/config", "/%2Eenv", "/notes.txt", "/sub/", "/sub"] {
                let refused = try await server.api.request("GET", path)
                #expect(refused.status == 404, "\(path): \(refused.status)")
                #expect(!refused.text.contains("SECRET") && !refused.text.contains("private") && !refused.text.contains("[core]"), "\(path)")
            }
        }
    }

    @Test func rangesOfTheClientsFilesAreServedExactlyOrRefused() async throws {
        try await TestServer.with { server in
            let whole = try await server.api.request("GET", "/js/protocol.js")
            #expect(whole.status == 200)
            let size = whole.body.count
            #expect(size > 100)
            // Open to the end, from the start: the whole file, and the server is still there.
            let open = try await server.api.request("GET", "/js/protocol.js", headers: ["Range": "bytes=0-"])
            #expect(open.status == 206)
            #expect(open.body == whole.body)
            let tail = try await server.api.request("GET", "/js/protocol.js", headers: ["Range": "bytes=10-"])
            #expect(tail.status == 206)
            #expect(tail.body == whole.body.dropFirst(10))
            #expect(tail.headers["content-length"] == String(size - 10))
            #expect(tail.headers["content-range"] == "bytes 10-\(size - 1)/\(size)")
            let past = try await server.api.request("GET", "/js/protocol.js", headers: ["Range": "bytes=10-999999999"])
            #expect(past.status == 206)
            #expect(past.body == whole.body.dropFirst(10))
            let middle = try await server.api.request("GET", "/js/protocol.js", headers: ["Range": "bytes=5-9"])
            #expect(middle.status == 206)
            #expect(middle.body == whole.body.dropFirst(5).prefix(5))
            // Nothing of the file there: refused, saying how long it is.
            let beyond = try await server.api.request("GET", "/js/protocol.js", headers: ["Range": "bytes=\(size)-"])
            #expect(beyond.status == 416)
            #expect(beyond.headers["content-range"] == "bytes */\(size)")
            // The last bytes, or a list of ranges: the whole file rather than the wrong bytes.
            for range in ["bytes=-5", "bytes=0-1,5-9"] {
                let served = try await server.api.request("GET", "/js/protocol.js", headers: ["Range": range])
                #expect(served.status == 200, "\(range)")
                #expect(served.body == whole.body, "\(range)")
            }
            #expect(try await server.api.request("GET", "/").status == 200)
        }
    }

    @Test func anInviteLinkBecomesAQRCodeImage() async throws {
        try await TestServer.with { server in
            let text = "http://127.0.0.1:8080/j/4KX9QZ".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let svg = try await server.api.request("GET", "/api/v1/qr.svg?text=\(text)")
            #expect(svg.status == 200)
            #expect(svg.headers["content-type"] == "image/svg+xml")
            #expect(svg.text.hasPrefix("<svg"))
            let missing = try await server.api.request("GET", "/api/v1/qr.svg")
            #expect(missing.status == 400)
            #expect(missing.errorCode == .invalidField)
            let long = try await server.api.request("GET", "/api/v1/qr.svg?text=\(String(repeating: "a", count: 513))")
            #expect(long.status == 400)
            #expect(long.text.contains("512"))
        }
    }
}
