import Foundation
import JamTestSupport
import Testing

/// A body that breaks HTTP/1.1's framing gets 400 and a closed connection, as Node's HTTP
/// server answers a request it cannot parse; never a 500.
@Suite("PirateRadio: a body that breaks HTTP framing")
struct BodyFramingTests {
    @Test("a chunk size that is no number is refused with 400, and the connection closes")
    func aChunkSizeThatIsNoNumberIs400() async throws {
        try await PirateServer.with { server in
            let connection = try await RawConnection(port: server.port)
            try await connection.send(
                "POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n")
            let text = await connection.jsonAnswer()
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
            #expect(await connection.closedByServer(within: .seconds(3)))
            await connection.close()
        }
    }
}
