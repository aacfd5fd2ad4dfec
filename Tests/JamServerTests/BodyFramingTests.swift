import Foundation
import JamTestSupport
import Testing

/// A request body that breaks HTTP/1.1's framing is the client's doing: it gets 400 saying
/// so, not the 500 of a server failure, and the connection, which can carry no further
/// request, closes after the answer.
@Suite struct BodyFramingTests {
    /// A chunked request to `path` whose body is `chunks`, as it is on the wire.
    static func chunked(_ path: String, _ chunks: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\(chunks)"
    }

    /// Sends `request` on a connection of its own: the answer's text, and whether the server
    /// closed the connection after it.
    static func answer(to request: String, port: Int) async throws -> (text: String, closed: Bool) {
        let connection = try await RawConnection(port: port)
        try await connection.send(request)
        let text = await connection.jsonAnswer()
        let closed = await connection.closedByServer(within: .seconds(3))
        await connection.close()
        return (text, closed)
    }

    static let cases = [
        ("a chunk size that is no number", "ZZ\r\nabc\r\n0\r\n\r\n"),
        ("a chunk longer than its size", "3\r\n{\"displayName\":\"Ann\"}\r\n0\r\n\r\n"),
    ]

    @Test(arguments: cases)
    func aBodyThatBreaksHTTPFramingIsRefusedWith400(_ name: String, _ chunks: String) async throws {
        try await TestServer.with { server in
            let (text, closed) = try await Self.answer(to: Self.chunked("/auth/guest", chunks), port: server.port)
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(name): \(text)")
            #expect(text.contains(#""code":"malformed""#), "\(name): \(text)")
            #expect(text.contains("not valid HTTP/1.1"), "\(name): \(text)")
            #expect(closed, "\(name): the connection stayed open")
        }
    }
}
