import Foundation
import JamTestSupport
import NIOCore
import Testing

@testable import JamServer

/// Connections that never finish a request head or its body, and kept-alive ones left idle,
/// are closed; one whose request cannot be parsed is answered 400 once and closed.
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
            // A timer late under load closes it after the last line: the head never ended.
            if !closed { closed = await connection.closedByServer(within: .seconds(3)) }
            #expect(closed)
        }
    }

    @Test(arguments: [
        "GARBAGE\r\n\r\n",
        "GET /api/v1/time HTTP/1.1\r\nHost: x\r\nX-Foo: abc\u{7f}\r\n\r\n",
        "POST /auth/guest HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
    ])
    func aFirstRequestThatCannotBeParsedIsAnswered400AndClosed(_ request: String) async throws {
        // No header timeout to fall back on: the head's blank line came, so it let go.
        try await TestServer.with { server in
            let connection = try await RawConnection(port: server.port)
            try await connection.send(request)
            let answer = await connection.received { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
            #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(String(decoding: answer, as: UTF8.self))")
            #expect(await connection.closedByServer(within: .seconds(5)))
            let all = String(decoding: await connection.received(within: .zero) { _ in true }, as: UTF8.self)
            #expect(all.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer: \(all)")
        }
    }

    @Test func aSecondRequestThatCannotBeParsedIsAnsweredOnce() async throws {
        try await TestServer.with { server in
            let connection = try await RawConnection(port: server.port)
            try await connection.send("GET /api/v1/time HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = await connection.received { String(decoding: $0, as: UTF8.self).contains("serverTime") }
            try await connection.send("GARBAGE\r\n\r\n")
            #expect(await connection.closedByServer(within: .seconds(5)))
            let text = String(decoding: await connection.received(within: .zero) { _ in true }, as: UTF8.self)
            #expect(text.components(separatedBy: "HTTP/1.1 ").count == 3, "one answer to each request: \(text)")
            #expect(text.contains("HTTP/1.1 400"), "\(text)")
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

    /// Timeouts for the body tests: a head in time, a body timeout of `bodyMs`, idle after `idleMs`.
    static func bodyTimeouts(bodyMs: Int64, idleMs: Int64) -> @Sendable (inout ServerConfiguration) -> Void {
        { $0.headerTimeout = .milliseconds(1_500); $0.httpIdleTimeout = .milliseconds(idleMs); $0.bodyTimeout = .milliseconds(bodyMs) }
    }

    /// Sends the head of a guest sign-in whose body is `body`.
    static func sendSignInHead(_ connection: RawConnection, for body: String) async throws {
        try await connection.send("POST /auth/guest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
    }

    @Test func aBodyDrippedPastTheBodyTimeoutIsCutOffThoughEachByteBeatsTheIdleTimeout() async throws {
        try await TestServer.with(configure: Self.bodyTimeouts(bodyMs: 1_000, idleMs: 5_000)) { server in
            let connection = try await RawConnection(port: server.port)
            let body = #"{"displayName":"Dripping Dana"}"#
            try await Self.sendSignInHead(connection, for: body)
            let started = ContinuousClock.now
            var closed = false
            // A byte every 200 ms keeps Hummingbird's idle timer (5 s) from ever firing; the
            // body, 30 bytes, would take 6 s.
            for byte in body.utf8 {
                try? await connection.send(bytes: [byte])
                if await connection.closedByServer(within: .milliseconds(200)) {
                    closed = true
                    break
                }
            }
            // A timer late under load still closes it, well before the body could be complete.
            if !closed { closed = await connection.closedByServer(within: .seconds(3)) }
            #expect(closed)
            #expect(ContinuousClock.now - started < .seconds(5))
            let answer = String(decoding: await connection.received(within: .zero) { _ in true }, as: UTF8.self)
            #expect(!answer.contains("201"), "the cut-off request is not served")
        }
    }

    @Test func aBodyInBeforeTheBodyTimeoutIsServedAndItsConnectionKept() async throws {
        try await TestServer.with(configure: Self.bodyTimeouts(bodyMs: 2_500, idleMs: 8_000)) { server in
            let body = #"{"displayName":"Prompt Pat"}"#
            var attempt = 0
            var connection: RawConnection
            while true {
                attempt += 1
                connection = try await RawConnection(port: server.port)
                let connected = ContinuousClock.now
                var headSent: ContinuousClock.Instant?
                do {
                    try await Self.sendSignInHead(connection, for: body)
                    headSent = .now
                    try await Task.sleep(for: .milliseconds(300))
                    try await connection.send(body)
                    break
                } catch {
                    // A full run can starve this client past a timeout between its own steps
                    // (1.5 s from the connect to the head, 2.5 s from the head to the body), and
                    // the server is right to close then. Closed any sooner, the test fails.
                    let late = headSent.map { ContinuousClock.now - $0 >= .milliseconds(2_500) } ?? (ContinuousClock.now - connected >= .milliseconds(1_500))
                    guard late, attempt < 3 else { throw error }
                }
            }
            let answer = String(decoding: await connection.received { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n{") }, as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 201"))
            // Past the body timeout counted from the head: the request ended in time, so its
            // deadline is gone and the kept-alive connection stays until it is idle too long.
            #expect(await !connection.closedByServer(within: .milliseconds(3_500)))
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
