import Foundation
import JamTestSupport
import NIOHTTP1
import Testing

@testable import JamServer

/// Requests that ask for a protocol upgrade the server does not take are answered, never left
/// hanging: as the plain request they also are, or with a refusal once NIO has them.
@Suite struct UpgradeRequestTests {
    /// The headers of a WebSocket upgrade as a browser sends them.
    static let webSocket = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

    /// Sends `request` on a connection of its own and reads the answer's status line.
    static func statusLine(of request: String, port: Int) async throws -> String {
        let connection = try await RawConnection(port: port)
        try await connection.send(request)
        let bytes = await connection.received(within: .seconds(5)) { $0.contains(UInt8(ascii: "\n")) }
        await connection.close()
        return String(decoding: bytes, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
    }

    @Test("a WebSocket upgrade of a page that is not a socket is answered as the plain request")
    func aWebSocketUpgradeOfAPageThatIsNotASocketIsAnsweredAsThePlainRequest() async throws {
        try await TestServer.with { server in
            let page = try await Self.statusLine(of: "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\(Self.webSocket)\r\n", port: server.port)
            #expect(page == "HTTP/1.1 200 OK")
            let missing = try await Self.statusLine(of: "GET /no-such-page HTTP/1.1\r\nHost: 127.0.0.1\r\n\(Self.webSocket)\r\n", port: server.port)
            #expect(missing == "HTTP/1.1 404 Not Found")
        }
    }

    @Test("an upgrade to another protocol is answered as the plain request, and the connection closes after it")
    func anUpgradeToAnotherProtocolIsAnsweredAsThePlainRequest() async throws {
        try await TestServer.with { server in
            let connection = try await RawConnection(port: server.port)
            // What `curl --http2` sends to an http:// address.
            try await connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n")
            let answer = String(decoding: await connection.received { $0.contains(UInt8(ascii: "}")) }, as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer)")
            #expect(answer.contains("\"status\":\"ok\""), "\(answer)")
            // NIO's decoder reads nothing after a request that asked for an upgrade: the answer
            // is the connection's last, not a wait for a request it would never read.
            #expect(await connection.closedByServer(within: .seconds(5)))
        }
    }

    @Test("an upgrade asked for on a kept-alive connection is answered as the plain request, and the connection closes after it")
    func anUpgradeOnAKeptAliveConnectionIsAnsweredAsThePlainRequest() async throws {
        try await TestServer.with { server in
            let connection = try await RawConnection(port: server.port)
            try await connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let first = await connection.received { $0.filter { $0 == UInt8(ascii: "}") }.count == 1 }
            #expect(String(decoding: first, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\n"))
            // The same connection, now asking to become a socket of a page that is not one.
            try await connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\(Self.webSocket)\r\n")
            let both = String(decoding: await connection.received { $0.filter { $0 == UInt8(ascii: "}") }.count == 2 }, as: UTF8.self)
            #expect(both.components(separatedBy: "HTTP/1.1 200 OK\r\n").count == 3, "\(both)")
            #expect(await connection.closedByServer(within: .seconds(5)))
        }
    }

    @Test("a WebSocket upgrade of the socket path that NIO cannot take is refused with 400")
    func aWebSocketUpgradeThatNIOCannotTakeIsRefused() async throws {
        try await TestServer.with { server in
            let version12 = Self.webSocket.replacingOccurrences(of: "Version: 13", with: "Version: 12")
            let status = try await Self.statusLine(of: "GET /api/v1/sessions/x/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n\(version12)\r\n", port: server.port)
            #expect(status == "HTTP/1.1 400 Bad Request")
            // The version the server speaks, for the client to try again with (RFC 6455 §4.4).
            let connection = try await RawConnection(port: server.port)
            try await connection.send("GET /api/v1/sessions/x/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n\(version12)\r\n")
            let answer = String(decoding: await connection.received { $0.count > 4 && $0.suffix(4) == Array("\r\n\r\n".utf8) }, as: UTF8.self)
            await connection.close()
            #expect(answer.lowercased().contains("\r\nsec-websocket-version: 13\r\n"), "\(answer)")
        }
    }

    @Test("the socket path asked for without an upgrade is told it opens a WebSocket")
    func theSocketPathWithoutAnUpgradeIsToldItOpensAWebSocket() async throws {
        try await TestServer.with { server in
            // What a proxy that drops the upgrade headers passes on.
            let answer = try await RawConnection.answer(
                to: "GET /api/v1/sessions/\(UUID().uuidString.lowercased())/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: server.port)
            #expect(answer.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"), "\(answer)")
            let head = answer.lowercased()
            #expect(head.contains("\r\nupgrade: websocket\r\n"), "\(answer)")
            #expect(head.contains("\r\nsec-websocket-version: 13\r\n"), "\(answer)")
            #expect(answer.contains("opens a WebSocket"), "\(answer)")
            // Any other method still hears which one the path takes.
            let post = try await server.api.request("POST", "/api/v1/sessions/\(UUID().uuidString.lowercased())/realtime", token: nil, body: Data())
            #expect(post.status == 405)
        }
    }

    @Test("the socket path without a WebSocket key is served as the plain request")
    func theSocketPathWithoutAWebSocketKeyIsServedAsThePlainRequest() async throws {
        try await TestServer.with { server in
            let keyless = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            let status = try await Self.statusLine(of: "GET /api/v1/sessions/x/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n\(keyless)\r\n", port: server.port)
            #expect(status.hasPrefix("HTTP/1.1 4"), "\(status)")
        }
    }

    @Test("a request's upgrade is kept only when it is a WebSocket the profile takes")
    func aRequestsUpgradeIsKeptOnlyWhenItIsAWebSocketTheProfileTakes() {
        func head(_ path: String, _ headers: [(String, String)]) -> HTTPRequestHead {
            HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: HTTPHeaders(headers))
        }
        let socket: [(String, String)] = [
            ("Connection", "keep-alive, Upgrade"), ("Upgrade", "WebSocket"), ("Sec-WebSocket-Key", "k"), ("Sec-WebSocket-Version", "13"),
        ]
        let takesSockets: (HTTPRequestHead) -> Bool = { $0.uri.hasSuffix("/realtime") }
        let kept = UpgradeRequestFilter.filtered(head("/s/realtime", socket), takes: takesSockets)
        #expect(kept.headers[canonicalForm: "upgrade"] == ["WebSocket"])
        #expect(kept.headers[canonicalForm: "connection"].map { $0.lowercased() } == ["keep-alive", "upgrade"])
        for (path, headers) in [
            ("/healthz", socket),
            ("/s/realtime", [("Connection", "Upgrade"), ("Upgrade", "h2c")]),
            ("/s/realtime", Array(socket.dropLast())),
            ("/healthz", [("Connection", "Upgrade"), ("Upgrade", "")]),
        ] {
            let plain = UpgradeRequestFilter.filtered(head(path, headers), takes: takesSockets)
            #expect(plain.headers[canonicalForm: "upgrade"].isEmpty, "\(path) \(headers)")
            #expect(plain.headers[canonicalForm: "connection"] == ["close"], "\(path) \(headers)")
        }
        let untouched = head("/healthz", [("Connection", "keep-alive")])
        #expect(UpgradeRequestFilter.filtered(untouched, takes: takesSockets) == untouched)
    }
}
