import Foundation
import HTTPTypes
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

    /// The query parameter `name` as the router decodes it (the first of several); refused when
    /// its %-escapes decode to bytes that are not UTF-8, which the decoder turns into U+FFFD:
    /// the route would take them for text the client never sent.
    package static func queryText(_ request: Request, _ name: String) throws(JamError) -> String? {
        guard let value = request.uri.queryParameters[Substring(name)] else { return nil }
        guard value.contains("\u{FFFD}") else { return String(value) }
        let raw = (request.uri.query ?? "").split(separator: "&").lazy.compactMap { part -> Substring? in
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return pair.count == 2 && pair[0] == name ? pair[1] : nil
        }.first
        // Foundation's decoding gives nil where the decoded bytes are not UTF-8.
        if let raw, String(raw).removingPercentEncoding == nil {
            throw JamError(.invalidField, "\(name) is not UTF-8 once its %-escapes are decoded")
        }
        return String(value)
    }

    /// The `epoch` query parameter: the song a host control or skip request is for, so one sent
    /// late (a retry after the connection dropped) is refused once another song plays.
    package static func epoch(_ request: Request) throws(JamError) -> Int64? {
        guard let text = request.uri.queryParameters["epoch"] else { return nil }
        // Digits only: Int64 would take "+5" too.
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let epoch = Int64(String(text)) else {
            throw JamError(.invalidField, "epoch must be a non-negative integer (the nowPlaying.epoch of the song meant), got \"\(text.prefix(32))\"")
        }
        return epoch
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

    /// A queue item's ID from the path, as the socket takes it: the library shuffle's items
    /// have IDs of their own (`fallback-1`), so an ID that is not a UUID may still name one;
    /// one that names none is the session's to refuse (404, or 409 for an item about to play).
    package static func itemID(in context: JamRequestContext) throws -> ItemID {
        let raw = try context.parameters.require("itemId")
        guard JamID.accepts(raw) else {
            throw JamError(.invalidField, "itemId must be 1 to \(JamID.maxLength) bytes, got \(raw.utf8.count)")
        }
        return JamID(raw)
    }

    /// A JSON response.
    package static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try WireCoding.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The request's `Idempotency-Key`, checked; nil when it sends none.
    package static func idempotencyKey(_ request: Request) throws -> IdempotencyKey? {
        let values = request.headers[values: idempotencyKeyField]
        guard let first = values.first else { return nil }
        // Two keys name two changes: which one the caller meant is not ours to guess.
        guard values.count == 1 else { throw JamError(.invalidField, "send one \(IdempotencyKey.header) header, not \(values.count)") }
        return try IdempotencyKey(first)
    }

    /// A JSON response of what a change read, marked when an earlier request with the same
    /// idempotency key answered it.
    package static func json<T: Encodable>(_ performed: Performed<T>, status: HTTPResponse.Status = .ok) throws -> Response {
        try json(performed.read, status: status, replayed: performed.replayed)
    }

    /// A JSON response, marked when an earlier request with the same idempotency key answered it.
    package static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, replayed: Bool) throws -> Response {
        marking(try json(value, status: status), replayed: replayed)
    }

    /// `response`, saying whether it answers an earlier request with the same idempotency key.
    package static func marking(_ response: Response, replayed: Bool) -> Response {
        guard replayed else { return response }
        var response = response
        response.headers[idempotentReplayedField] = "true"
        return response
    }

    private static let idempotencyKeyField = HTTPField.Name(IdempotencyKey.header)!
    private static let idempotentReplayedField = HTTPField.Name(IdempotencyKey.replayedHeader)!

    /// The client as per-address limits count it (`ClientAddresses.limitKey`), from the
    /// address `ClientAddressMiddleware` resolved. Every route runs behind that middleware; a
    /// route that did not would share one bucket with every other such request, so debug builds
    /// (the tests) stop on it.
    package static func clientAddress(_ context: JamRequestContext) -> String {
        guard let address = context.clientAddress else {
            assertionFailure("a per-address limit was checked before ClientAddressMiddleware ran")
            return "unknown"
        }
        return ClientAddresses.limitKey(address)
    }
}
