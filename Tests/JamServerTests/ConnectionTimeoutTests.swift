import Foundation
import JamTestSupport
import NIOCore
import Testing

@testable import JamServer

/// Connections that never finish a request head, and kept-alive ones left idle, are closed.
@Suite struct ConnectionTimeoutTests {
    static let configure: @Sendable (inout ServerConfiguration) -> Void = {
        $0.headerTimeout = .milliseconds(400)
        $0.httpIdleTimeout = .milliseconds(3_000)
    }

    @Test func aConnectionThatSendsNothingIsClosedAfterTheHeaderTimeout() async throws {
        try await TestServer.with(configure: Self.configure) { server in
            let connection = try await RawConnection(port: server.port)
            #expect(await connection.closedByServer(within: .seconds(5)))
        }
    }

    @Test func headersDrippedSlowerThanTheTimeoutAreCutOff() async throws {
        try await TestServer.with(configure: Self.configure) { server in
            let connection = try await RawConnection(port: server.port)
            var closed = false
            for line in ["GET /healthz HTTP/1.1\r\n", "Host: 127.0.0.1\r\n", "X-A: 1\r\n", "X-B: 2\r\n", "X-C: 3\r\n"] {
                try? await connection.send(line)
                if await connection.closedByServer(within: .milliseconds(200)) {
                    closed = true
                    break
                }
            }
            #expect(closed)
        }
    }

    @Test func aKeptAliveConnectionOutlivesTheHeaderTimeoutUntilItIsIdleTooLong() async throws {
        // Wider than the other tests' timeouts: with every suite running at once, more than
        // 400 ms can pass between the connect and the request's first byte, and the server is
        // right to close a connection whose head came that late.
        let configure: @Sendable (inout ServerConfiguration) -> Void = {
            $0.headerTimeout = .milliseconds(1_500)
            $0.httpIdleTimeout = .milliseconds(5_000)
        }
        try await TestServer.with(configure: configure) { server in
            let connection = try await RawConnection(port: server.port)
            try await connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            // Past the header timeout (counted from the connect, before the send): the head came
            // in time, so the connection stays.
            #expect(await !connection.closedByServer(within: .milliseconds(2_000)))
            // Idle past the HTTP idle timeout: closed.
            #expect(await connection.closedByServer(within: .seconds(8)))
        }
    }

    @Test func blankLinesBeforeTheRequestLineDoNotStopTheHeaderTimeout() async throws {
        try await TestServer.with(configure: Self.configure) { server in
            let connection = try await RawConnection(port: server.port)
            // The HTTP parser skips these; a head they seemed to end would end the deadline. (On
            // a busy machine the deadline may close the connection before they are sent.)
            try? await connection.send("\r\n\r\n\r\n")
            #expect(await connection.closedByServer(within: .seconds(5)))
        }
    }

    @Test func theEndOfAHeadIsFoundAcrossReads() {
        var scan = HeadScan()
        #expect(scan.endOfHead(in: ByteBuffer(string: "GET / HTTP/1.1\r\nHost: a\r")) == nil)
        #expect(scan.endOfHead(in: ByteBuffer(string: "\n\r")) == nil)
        #expect(scan.endOfHead(in: ByteBuffer(string: "\nbody")) == 1)
        scan = HeadScan()
        #expect(scan.endOfHead(in: ByteBuffer(string: "a\r\n\r\r\n\r\nb")) == 8)
        scan = HeadScan()
        #expect(scan.endOfHead(in: ByteBuffer(string: "\r\n\r\n")) == nil, "blank lines before a request are no head")
        #expect(scan.endOfHead(in: ByteBuffer(string: "\r\nGET / HTTP/1.1\r\n\r\n")) == 20)
    }
}
