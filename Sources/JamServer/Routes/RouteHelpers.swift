import Foundation
import Hummingbird
import JamProtocol
import NIOCore

/// Reading bodies and parameters, and writing JSON, the same way in every route.
package enum RouteHelpers {
    /// The first segment of `path`, as the router sees it: it skips empty segments, so
    /// `//api/…` reaches the API as `/api/…` does.
    static func firstSegment(_ path: String) -> Substring? {
        path.split(separator: "/").first
    }

    /// Decodes the JSON body as `T`, with a specific error for every way it can be wrong.
    package static func body<T: Decodable>(_ type: T.Type, from request: Request, context: JamRequestContext) async throws -> T {
        let buffer = try await request.body.collect(upTo: context.maxBodyBytes)
        guard buffer.readableBytes > 0 else { throw JamError(.malformed, "the body is empty; expected a JSON object") }
        return try WireCoding.decode(T.self, from: Data(buffer: buffer))
    }

    /// An OpenJam ID from the path: it must be a UUID.
    package static func uuid(_ name: String, in context: JamRequestContext, label: String) throws -> JamID {
        let raw = try context.parameters.require(name)
        guard let id = JamID.uuid(raw) else { throw JamError(.invalidField, "\(label) must be a UUID, got \"\(raw.prefix(64))\"") }
        return id
    }

    /// A JSON response.
    package static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try WireCoding.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The client's address, for per-address limits, as `ClientAddressMiddleware` resolved it.
    /// Every route runs behind that middleware; a route that did not would share one bucket
    /// with every other such request, so debug builds (the tests) stop on it.
    package static func clientAddress(_ context: JamRequestContext) -> String {
        guard let address = context.clientAddress else {
            assertionFailure("a per-address limit was checked before ClientAddressMiddleware ran")
            return "unknown"
        }
        return address
    }
}
