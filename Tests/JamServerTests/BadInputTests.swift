import JamTestSupport
import Foundation
import JamProtocol
import Testing

/// Bad input of every kind gets a specific error, changes nothing, and the server keeps serving.
@Suite struct BadInputTests {
    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let method: String
        let path: @Sendable (SessionID, ItemID) -> String
        let body: String?
        let status: Int
        let code: ErrorCode
        var authenticated = true
    }

    static let huge = String(repeating: "a", count: 70 * 1024)
    static let longName = String(repeating: "n", count: 65)

    static let restCases: [Case] = [
        Case(description: "not JSON", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: "{\"track\": ", status: 400, code: .malformed),
        Case(description: "empty body", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: "", status: 400, code: .malformed),
        // JSONDecoder traps on exactly this text: the server must refuse it and live on.
        Case(description: "nested deeper than JSONDecoder reads", method: "POST", path: { _, _ in "/auth/guest" }, body: String(repeating: "[", count: 513), status: 400, code: .malformed, authenticated: false),
        Case(description: "nested deeper after a string JSONDecoder ends early", method: "POST", path: { _, _ in "/auth/guest" }, body: #"["\uAAA\","# + String(repeating: "[", count: 512), status: 400, code: .malformed, authenticated: false),
        Case(description: "nested deeper, queue", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: #"{"track":"# + String(repeating: "[", count: 512), status: 400, code: .malformed),
        Case(description: "missing track", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: #"{"nonce":"x"}"#, status: 400, code: .malformed),
        Case(description: "wrong type", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: #"{"track":{"id":"t","name":7,"artist":"a","source":"external"},"nonce":"x"}"#, status: 400, code: .malformed),
        Case(description: "empty track name", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: #"{"track":{"id":"t","name":" ","artist":"a","source":"external"},"nonce":"x"}"#, status: 400, code: .invalidField),
        Case(description: "negative duration", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: #"{"track":{"id":"t","name":"n","artist":"a","durationMs":-5,"source":"external"},"nonce":"x"}"#, status: 400, code: .invalidField),
        Case(description: "unknown source", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: #"{"track":{"id":"t","name":"n","artist":"a","source":"tape"},"nonce":"x"}"#, status: 400, code: .invalidField),
        Case(description: "empty nonce", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: #"{"track":{"id":"t","name":"n","artist":"a","source":"external"},"nonce":""}"#, status: 400, code: .invalidField),
        Case(description: "oversized body", method: "POST", path: { s, _ in "/api/v1/sessions/\(s)/queue" }, body: "{\"nonce\":\"\(huge)\"}", status: 413, code: .tooLarge),
        Case(description: "bad session UUID", method: "GET", path: { _, _ in "/api/v1/sessions/not-a-uuid" }, body: nil, status: 400, code: .invalidField),
        Case(description: "unknown session", method: "GET", path: { _, _ in "/api/v1/sessions/\(UUID().uuidString)" }, body: nil, status: 404, code: .notFound),
        Case(description: "an item id no item has", method: "PUT", path: { s, _ in "/api/v1/sessions/\(s)/queue/item-1/vote" }, body: #"{"value":1}"#, status: 404, code: .notFound),
        Case(description: "an item id over 128 bytes", method: "PUT", path: { s, _ in "/api/v1/sessions/\(s)/queue/\(String(repeating: "i", count: 129))/vote" }, body: #"{"value":1}"#, status: 400, code: .invalidField),
        Case(description: "unknown item", method: "PUT", path: { s, _ in "/api/v1/sessions/\(s)/queue/\(UUID().uuidString)/vote" }, body: #"{"value":1}"#, status: 404, code: .notFound),
        Case(description: "vote out of range", method: "PUT", path: { s, i in "/api/v1/sessions/\(s)/queue/\(i)/vote" }, body: #"{"value":3}"#, status: 400, code: .invalidField),
        Case(description: "vote of wrong type", method: "PUT", path: { s, i in "/api/v1/sessions/\(s)/queue/\(i)/vote" }, body: #"{"value":"up"}"#, status: 400, code: .malformed),
        Case(description: "remove unknown item", method: "DELETE", path: { s, _ in "/api/v1/sessions/\(s)/queue/\(UUID().uuidString)" }, body: nil, status: 404, code: .notFound),
        Case(description: "negative seek", method: "PATCH", path: { s, _ in "/api/v1/sessions/\(s)" }, body: #"{"seekMs":-1}"#, status: 400, code: .invalidField),
        Case(description: "seek past the end", method: "PATCH", path: { s, _ in "/api/v1/sessions/\(s)" }, body: #"{"seekMs":999999999}"#, status: 400, code: .invalidField),
        Case(description: "empty update", method: "PATCH", path: { s, _ in "/api/v1/sessions/\(s)" }, body: "{}", status: 400, code: .invalidField),
        Case(description: "threshold out of range", method: "PATCH", path: { s, _ in "/api/v1/sessions/\(s)" }, body: #"{"settings":{"skipThreshold":2}}"#, status: 400, code: .invalidField),
        Case(description: "settings and a failing pause together", method: "PATCH", path: { s, _ in "/api/v1/sessions/\(s)" }, body: #"{"settings":{"locked":true},"playback":"resume"}"#, status: 409, code: .conflict),
        Case(description: "empty join code", method: "POST", path: { _, _ in "/api/v1/sessions/join" }, body: #"{"code":""}"#, status: 400, code: .invalidField),
        Case(description: "unknown join code", method: "POST", path: { _, _ in "/api/v1/sessions/join" }, body: #"{"code":"ZZZZZZ"}"#, status: 404, code: .notFound),
        Case(description: "empty display name", method: "POST", path: { _, _ in "/auth/guest" }, body: #"{"displayName":""}"#, status: 400, code: .invalidField, authenticated: false),
        Case(description: "huge display name", method: "POST", path: { _, _ in "/auth/guest" }, body: "{\"displayName\":\"\(longName)\"}", status: 400, code: .invalidField, authenticated: false),
        Case(description: "display name that turns the direction of text", method: "POST", path: { _, _ in "/auth/guest" }, body: #"{"displayName":"\u202Eecila"}"#, status: 400, code: .invalidField, authenticated: false),
        Case(description: "host name that turns the direction of text", method: "POST", path: { _, _ in "/api/v1/sessions" }, body: #"{"displayName":"\u2067Bob\u2069"}"#, status: 400, code: .invalidField),
        Case(description: "display name of wrong type", method: "POST", path: { _, _ in "/auth/guest" }, body: #"{"displayName":null}"#, status: 400, code: .malformed, authenticated: false),
        Case(description: "huge session name", method: "POST", path: { _, _ in "/api/v1/sessions" }, body: "{\"name\":\"\(String(repeating: "s", count: 101))\"}", status: 400, code: .invalidField),
        Case(description: "a search whose %-escapes are not UTF-8", method: "GET", path: { _, _ in "/api/v1/search?q=%FF%FE" }, body: nil, status: 400, code: .invalidField),
        Case(description: "a QR text whose %-escapes are not UTF-8", method: "GET", path: { _, _ in "/api/v1/qr.svg?text=caf%E9" }, body: nil, status: 400, code: .invalidField),
        Case(description: "unknown route", method: "GET", path: { _, _ in "/api/v1/nothing-here" }, body: nil, status: 404, code: .notFound),
        Case(description: "a method the path does not take", method: "PUT", path: { s, _ in "/api/v1/sessions/\(s)" }, body: "{}", status: 405, code: .methodNotAllowed),
    ]

    @Test func restRejectsBadInputAndChangesNothing() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let item = try await server.api.add(party.host.token, party.id, testTrack(2)).decode(QueueItem.self)
            try await party.host.socket.next(.playCommit)
            let before = try await server.api.view(party.host.token, party.id)
            for test in Self.restCases {
                let response = try await server.api.request(
                    test.method, test.path(party.id, item.id), token: test.authenticated ? party.host.token : nil,
                    body: test.body.map { Data($0.utf8) })
                #expect(response.status == test.status, "\(test): \(response.status) \(response.text)")
                #expect(response.errorCode == test.code, "\(test): \(response.text)")
                let message = try? response.decode(ErrorBody.self).error.message
                #expect(message?.isEmpty == false, "\(test) has no message")
                #expect(try await server.api.view(party.host.token, party.id) == before, "\(test) changed the session")
            }
            let health = try await server.api.request("GET", "/healthz")
            #expect(health.status == 200)
            #expect(try health.decode(Health.self) == Health(status: .ok, sessions: 1))
            await party.close()
        }
    }

    @Test func socketRejectsBadFramesWithTypedErrorsAndStaysOpen() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let item = try await server.api.add(party.host.token, party.id, testTrack(2)).decode(QueueItem.self)
            let socket = party.host.socket
            try await socket.next(.playCommit)
            let before = try await server.api.view(party.host.token, party.id)
            let frames: [(String, String, ErrorCode, String?)] = [
                ("not JSON", "{{{", .malformed, nil),
                ("nested deeper than JSONDecoder reads", String(repeating: "[", count: 513), .malformed, nil),
                ("unknown type", #"{"type":"dance","id":"f2"}"#, .unknownType, "f2"),
                ("missing data", #"{"type":"vote","id":"f3"}"#, .malformed, "f3"),
                ("wrong type", #"{"type":"vote","id":"f4","data":{"itemId":5,"value":1}}"#, .malformed, "f4"),
                ("vote out of range", #"{"type":"vote","id":"f5","data":{"itemId":"\#(item.id)","value":2}}"#, .invalidField, "f5"),
                ("negative seek", #"{"type":"seek","id":"f6","data":{"positionMs":-10}}"#, .invalidField, "f6"),
                ("unknown item", #"{"type":"vote","id":"f7","data":{"itemId":"\#(UUID().uuidString)","value":1}}"#, .notFound, "f7"),
                ("empty settings", #"{"type":"updateSettings","id":"f8","data":{}}"#, .invalidField, "f8"),
                ("empty nonce", #"{"type":"addToQueue","id":"f9","data":{"track":{"id":"t","name":"n","artist":"a","source":"external"},"nonce":""}}"#, .invalidField, "f9"),
                ("type not a string", #"{"type":7,"id":"f10"}"#, .malformed, "f10"),
                ("empty id", #"{"type":"skip","id":""}"#, .invalidField, nil),
            ]
            for (name, text, code, id) in frames {
                socket.sendRaw(text)
                let reply = try await socket.next("error for \(name)") { $0.error != nil }
                #expect(reply.error?.code == code, "\(name): \(String(describing: reply.error))")
                #expect(reply.error?.id == id, "\(name)")
                #expect(reply.error?.message.isEmpty == false)
            }
            #expect(try await server.api.view(party.host.token, party.id) == before)
            // Still open and serving.
            socket.send(.ping(Ping(clientSendTime: 1)))
            try await socket.next(.pong)
            await party.close()
        }
    }

    @Test func oversizedFrameClosesOnlyThatSocket() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let before = try await server.api.view(party.host.token, party.id)
            party.guests[0].socket.sendRaw(#"{"type":"ping","data":{"clientSendTime":1},"pad":""# + String(repeating: "x", count: 100 * 1024) + "\"}")
            let close = try await party.guests[0].socket.closedByServer()
            #expect(close?.closeCode == .messageTooLarge)
            // The session and the other socket carry on.
            party.host.socket.send(.ping(Ping(clientSendTime: 2)))
            try await party.host.socket.next(.pong)
            let after = try await server.api.view(party.host.token, party.id)
            #expect(after.queue == before.queue && after.session == before.session)
            await party.close()
        }
    }

    /// A WebSocket frame as a client sends it: FIN, reserved bits and opcode, the length with
    /// the mask bit, then the masking key and the masked payload (RFC 6455 §5.2–5.3).
    static func frame(fin: Bool, opcode: UInt8, payload: [UInt8], masked: Bool = true, reserved: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (reserved << 4) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else {
            bytes.append(maskBit | 126)
            bytes += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// A close frame's payload: the code, then the reason's bytes.
    static func closePayload(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
    }

    /// Frames that break a rule, and the close code each must get.
    static func broken(_ name: String) -> (frames: [[UInt8]], code: UInt16) {
        let ping = Array(#"{"type":"ping","data":{"clientSendTime":1}}"#.utf8)
        switch name {
        case "too large":
            // 2 × 40 KB of one message: more than the 64 KiB the server accepts.
            return ([frame(fin: false, opcode: 0x1, payload: .init(repeating: 0x20, count: 40_000)),
                     frame(fin: true, opcode: 0x0, payload: .init(repeating: 0x20, count: 40_000))], 1009)
        case "a new message mid-message":
            return ([frame(fin: false, opcode: 0x1, payload: Array("{\"ty".utf8)), frame(fin: true, opcode: 0x1, payload: Array("{}".utf8))], 1002)
        case "a stray continuation":
            return ([frame(fin: true, opcode: 0x0, payload: Array("pe\"}".utf8))], 1002)
        case "an unmasked message":
            return ([frame(fin: true, opcode: 0x1, payload: ping, masked: false)], 1002)
        case "an unmasked fragment":
            return ([frame(fin: false, opcode: 0x1, payload: Array(ping[..<10])), frame(fin: true, opcode: 0x0, payload: Array(ping[10...]), masked: false)], 1002)
        case "a reserved bit":
            return ([frame(fin: true, opcode: 0x1, payload: ping, reserved: 0b100)], 1002)
        case "a reserved data opcode":
            return ([frame(fin: true, opcode: 0x3, payload: ping)], 1002)
        case "a reserved control opcode":
            return ([frame(fin: true, opcode: 0xB, payload: [])], 1002)
        case "text that is not UTF-8":
            return ([frame(fin: true, opcode: 0x1, payload: Array(#"{"type":"ping","x":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))], 1007)
        case "a close code no endpoint sends":
            return ([frame(fin: true, opcode: 0x8, payload: closePayload(1005))], 1002)
        case "a close code that does not exist":
            return ([frame(fin: true, opcode: 0x8, payload: closePayload(5000))], 1002)
        case "a close frame of one byte":
            return ([frame(fin: true, opcode: 0x8, payload: [0x03])], 1002)
        case "a close reason that is not UTF-8":
            return ([frame(fin: true, opcode: 0x8, payload: closePayload(1000, [0xFF, 0xFE]))], 1007)
        default:
            // Not a broken frame: a close with an application's code is answered with that code.
            return ([frame(fin: true, opcode: 0x8, payload: closePayload(4000, Array("bye".utf8)))], 4000)
        }
    }

    /// Opens a realtime socket on a raw connection, sends `frames` and expects a close frame with `code`.
    static func expectClose(after frames: [[UInt8]], code: UInt16, _ name: String) async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let raw = try await RawConnection(port: server.port)
            try await raw.send(
                "GET /api/v1/sessions/\(party.id)/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(party.host.token)\r\n\(UpgradeRequestTests.webSocket)\r\n")
            let upgraded = await raw.received { String(decoding: $0, as: UTF8.self).contains("101 Switching Protocols") }
            #expect(String(decoding: upgraded, as: UTF8.self).contains("101 Switching Protocols"))
            try await raw.send(bytes: frames.flatMap { $0 })
            // The close frame (0x88), its length, then the code.
            let expected: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xFF)]
            let closes = { (bytes: [UInt8]) in
                bytes.indices.contains { $0 + 3 < bytes.count && bytes[$0] == 0x88 && Array(bytes[($0 + 2)...($0 + 3)]) == expected }
            }
            let received = await raw.received(until: closes)
            #expect(closes(received), "\(name): no close frame with \(code) among \(received.count) bytes")
            // Answered as a client answers a close (the server may have dropped the connection
            // already, after a peer's close): then the server ends the connection at once,
            // rather than after its close grace.
            try? await raw.send(bytes: frame(fin: true, opcode: 0x8, payload: closePayload(code)))
            #expect(await raw.closedByServer(within: .seconds(3)), "\(name): the connection stays open")
            await raw.close()
            await party.close()
        }
    }

    @Test(arguments: ["too large", "a new message mid-message", "a stray continuation"])
    func aFragmentedMessageThatBreaksTheRulesIsClosedWithItsCode(name: String) async throws {
        let (frames, code) = Self.broken(name)
        try await Self.expectClose(after: frames, code: code, name)
    }

    @Test(arguments: [
        "an unmasked message", "an unmasked fragment", "a reserved bit", "a reserved data opcode", "a reserved control opcode",
        "text that is not UTF-8",
    ])
    func aFrameThatBreaksTheWebSocketProtocolIsClosedWithItsCode(name: String) async throws {
        let (frames, code) = Self.broken(name)
        try await Self.expectClose(after: frames, code: code, name)
    }

    @Test(arguments: [
        "a close code no endpoint sends", "a close code that does not exist", "a close frame of one byte", "a close reason that is not UTF-8",
        "an application's close code",
    ])
    func aPeersCloseIsAnsweredWithItsCodeUnlessItBreaksTheRules(name: String) async throws {
        let (frames, code) = Self.broken(name)
        try await Self.expectClose(after: frames, code: code, name)
    }

    @Test func aMessageWhoseCharacterSpansTwoFragmentsIsTaken() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let raw = try await RawConnection(port: server.port)
            try await raw.send(
                "GET /api/v1/sessions/\(party.id)/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(party.host.token)\r\n\(UpgradeRequestTests.webSocket)\r\n")
            _ = await raw.received { String(decoding: $0, as: UTF8.self).contains("101 Switching Protocols") }
            // "é" is 0xC3 0xA9: the first fragment ends between them.
            let text = Array(#"{"type":"ping","data":{"clientSendTime":1},"note":"é"}"#.utf8)
            let cut = text.firstIndex(of: 0xC3)! + 1
            try await raw.send(bytes: Self.frame(fin: false, opcode: 0x1, payload: Array(text[..<cut])) + Self.frame(fin: true, opcode: 0x0, payload: Array(text[cut...])))
            let received = await raw.received { String(decoding: $0, as: UTF8.self).contains("\"pong\"") }
            #expect(String(decoding: received, as: UTF8.self).contains("\"pong\""))
            // Still open and answering: a second ping gets a second pong.
            try await raw.send(bytes: Self.frame(fin: true, opcode: 0x1, payload: Array(#"{"type":"ping","data":{"clientSendTime":2}}"#.utf8)))
            let again = await raw.received { String(decoding: $0, as: UTF8.self).components(separatedBy: "\"pong\"").count == 3 }
            #expect(String(decoding: again, as: UTF8.self).components(separatedBy: "\"pong\"").count == 3, "a second pong")
            await raw.close()
            await party.close()
        }
    }
}
