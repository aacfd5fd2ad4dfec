import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// A token never travels in a URL: sockets carry it in a header or a subprotocol.
@Suite struct SocketTokenTests {
    /// The upgrade request a browser sends when it offers `subprotocols`.
    static func upgrade(_ session: SessionID, path: String? = nil, subprotocols: String?) -> String {
        var request = "GET \(path ?? "/api/v1/sessions/\(session)/realtime") HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let subprotocols { request += "Sec-WebSocket-Protocol: \(subprotocols)\r\n" }
        return request + "\r\n"
    }

    /// The response head and the first text frame after it, once both are in.
    static func headAndFirstFrame(_ connection: RawConnection) async throws -> (head: String, frame: String) {
        var split: (head: String, frame: String)?
        _ = await connection.received { bytes in
            split = Self.split(bytes)
            return split != nil
        }
        return try #require(split, "no upgrade response and frame arrived")
    }

    private static func split(_ bytes: [UInt8]) -> (head: String, frame: String)? {
        let end = Array("\r\n\r\n".utf8)
        guard let headEnd = (0...max(0, bytes.count - 4)).first(where: { bytes.count >= 4 && Array(bytes[$0..<$0 + 4]) == end }) else { return nil }
        let head = String(decoding: bytes[..<headEnd], as: UTF8.self)
        var at = headEnd + 4
        guard bytes.count >= at + 2 else { return nil }
        var length = Int(bytes[at + 1] & 0x7f)
        at += 2
        if length == 126 {
            guard bytes.count >= at + 2 else { return nil }
            length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
            at += 2
        } else if length == 127 {
            guard bytes.count >= at + 8 else { return nil }
            length = bytes[at..<at + 8].reduce(0) { $0 << 8 | Int($1) }
            at += 8
        }
        guard bytes.count >= at + length else { return nil }
        return (head, String(decoding: bytes[at..<at + length], as: UTF8.self))
    }

    @Test func aBrowserSocketCarriesItsTokenInASubprotocolAndTheServerSelectsOpenJam() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let view = try await server.api.create(host.token)
            let connection = try await RawConnection(port: server.port)
            try await connection.send(Self.upgrade(view.session.id, subprotocols: SocketAuth.offeredProtocols(token: host.token).joined(separator: ", ")))
            let (head, frame) = try await Self.headAndFirstFrame(connection)
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
            #expect(head.lowercased().contains("sec-websocket-protocol: openjam"), "a browser fails the socket unless the server selects a protocol it offered: \(head)")
            let envelope = try ServerEnvelope.decode(Data(frame.utf8))
            #expect(envelope.stateSync?.session.id == view.session.id, "\(frame)")
            await connection.close()
        }
    }

    @Test func aSocketWithItsTokenInTheURLIsRefusedAndToldWhereTheTokenGoes() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let view = try await server.api.create(host.token)
            let socket = TestSocket(server: server, session: view.session.id, token: nil, path: "/api/v1/sessions/\(view.session.id)/realtime?token=\(host.token)")
            let refusal = try #require(try await socket.next(.error).error)
            #expect(refusal.code == .unauthorized)
            #expect(refusal.message.contains("URL") && refusal.message.contains("bearer.<token>"), "\(refusal.message)")
            #expect(try await socket.closedByServer()?.closeCode == .init(codeNumber: 4401))
        }
    }

    @Test func aRestCallWithItsTokenInTheURLIsRefusedAndToldWhereTheTokenGoes() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let view = try await server.api.create(host.token)
            let answer = try await server.api.request("GET", "/api/v1/sessions/\(view.session.id)?token=\(host.token)")
            #expect(answer.status == 401)
            #expect(answer.errorCode == .unauthorized)
            #expect(answer.text.contains("Authorization: Bearer"), "\(answer.text)")
            // Also beside a header: the URL is in the logs either way.
            let both = try await server.api.request("GET", "/api/v1/sessions/\(view.session.id)?token=\(host.token)", token: host.token)
            #expect(both.status == 401, "\(both.text)")
        }
    }
}

/// Tokens expire; a member refreshes theirs while it is valid and stays the same member.
@Suite struct TokenRefreshTests {
    static let hour: Int64 = 3_600_000

    @Test func twoAuthorizationHeadersAreRefusedAsTwo() async throws {
        try await TestServer.with { server in
            let alice = try await server.api.guest("Alice")
            let text = try await RawConnection.answer(
                to: "POST /auth/refresh HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(alice.token)\r\nAuthorization: Bearer \(alice.token)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                port: server.port)
            #expect(text.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(text)")
            #expect(text.contains("send one Authorization header, not 2"), "\(text)")
        }
    }

    @Test func aSocketWithTwoAuthorizationHeadersIsRefusedAsTwo() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let connection = try await RawConnection(port: server.port)
            let bearer = "Authorization: Bearer \(party.host.token)\r\n"
            try await connection.send(
                "GET /api/v1/sessions/\(party.id)/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n\(bearer)\(bearer)\(UpgradeRequestTests.webSocket)\r\n")
            // The refusal, then a close frame (0x88) with 4401.
            let closes = { (bytes: [UInt8]) in bytes.indices.contains { $0 + 3 < bytes.count && bytes[$0] == 0x88 && bytes[$0 + 2] == 0x11 && bytes[$0 + 3] == 0x31 } }
            let bytes = await connection.received(until: closes)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.contains("send one Authorization header, not 2"), "\(text)")
            #expect(closes(bytes), "no close with 4401: \(text)")
            await connection.close()
            await party.close()
        }
    }

    @Test func aRefreshedTokenNamesTheSameMemberAndOutlivesTheOldOne() async throws {
        let clock = ShiftedClock()
        try await TestServer.with(clock: clock, configure: { $0.tokenLifetimeMs = 2 * Self.hour }) { server in
            let alice = try await server.api.guest("Alice")
            #expect(alice.expiresAt - clock.now() > 2 * Self.hour - 60_000 && alice.expiresAt <= clock.now() + 2 * Self.hour)
            let view = try await server.api.create(alice.token)

            clock.advance(byMs: Double(Self.hour + 5 * 60_000))
            let answer = try await server.api.request("POST", "/auth/refresh", token: alice.token)
            #expect(answer.status == 200, "\(answer.text)")
            let fresh = try answer.decode(GuestAuthResponse.self)
            #expect(fresh.userId == alice.userId && fresh.displayName == "Alice")
            #expect(fresh.token != alice.token)
            #expect(fresh.expiresAt >= alice.expiresAt + Self.hour)

            clock.advance(byMs: Double(Self.hour))
            let stale = try await server.api.request("GET", "/api/v1/sessions/\(view.session.id)", token: alice.token)
            #expect(stale.status == 401)
            #expect(stale.text.contains("expired"), "\(stale.text)")
            let hosted = try await server.api.view(fresh.token, view.session.id)
            #expect(hosted.members.first { $0.userId == alice.userId }?.role == .host, "the refreshed token is still the host")
            let socket = TestSocket(server: server, session: view.session.id, token: fresh.token)
            #expect(try await socket.next(.stateSync).stateSync?.session.id == view.session.id)
            await socket.close()
        }
    }

    @Test func anExpiredTokenCannotBeRefreshedAndSaysSo() async throws {
        let clock = ShiftedClock()
        try await TestServer.with(clock: clock, configure: { $0.tokenLifetimeMs = Self.hour }) { server in
            let bob = try await server.api.guest("Bob")
            clock.advance(byMs: Double(Self.hour + 1))
            let answer = try await server.api.request("POST", "/auth/refresh", token: bob.token)
            #expect(answer.status == 401)
            #expect(answer.errorCode == .unauthorized)
            #expect(answer.text.contains("expired"), "\(answer.text)")
            let anonymous = try await server.api.request("POST", "/auth/refresh")
            #expect(anonymous.status == 401)
        }
    }

    @Test func theSDKRefreshesItsTokenAndUsesTheNewOne() async throws {
        let clock = ShiftedClock()
        try await TestServer.with(clock: clock, configure: { $0.tokenLifetimeMs = Self.hour }) { server in
            var api = JamAPI(server: try #require(URL(string: server.baseURL)))
            let first = try await api.signIn(displayName: "Cleo")
            let view = try await api.createSession()
            clock.advance(byMs: Double(Self.hour / 2 + 1))
            let refreshed = try await api.refreshToken()
            #expect(api.token == refreshed.token && refreshed.userId == first.userId)
            clock.advance(byMs: Double(Self.hour / 2 + 1))
            #expect(try await api.session(view.session.id).session.id == view.session.id, "the SDK calls with the refreshed token")
        }
    }
}
