import Foundation
import JamTestSupport
import Testing

/// A body that breaks HTTP/1.1's framing gets what its server gives one: 400 "Invalid HTTP
/// request received.", and the connection closes; never a 500.
@Suite struct QueueITBodyFramingTests {
    @Test func aChunkSizeThatIsNoNumberIs400AndClosesTheConnection() async throws {
        try await QueueITServer.with { _, server in
            let connection = try await RawConnection(port: server.port)
            try await connection.send(
                "POST /auth/guest HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n")
            let text = await connection.jsonAnswer()
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
            #expect(text.contains(#""error":"Invalid HTTP request received.""#), "\(text)")
            #expect(await connection.closedByServer(within: .seconds(3)))
            await connection.close()
        }
    }

    @Test func aPlainGetOfTheSocketPathIsNotFoundAsInItsBackend() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let answer = try await api.request("GET", "/api/v1/sessions/\(UUID().uuidString.lowercased())/realtime", token: ann.token)
            #expect(answer.status == 404, "\(answer)")
            #expect(answer.error == "Not Found", "\(answer)")
        }
    }
}
