import Hummingbird
import JamProtocol
import Logging
import NIOCore
import NIOHTTP1

/// Turns every failure into the JSON error body `{"error": {"code", "message"}}` with
/// the right status, so no route can answer an error without saying why.
package struct ErrorMiddleware: RouterMiddleware {
    package typealias Context = JamRequestContext

    /// The profile's error body for an error (OpenJam's `{"error": {"code", "message"}}`).
    let body: @Sendable (JamError) -> Data

    package init(body: @escaping @Sendable (JamError) -> Data) {
        self.body = body
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as JamError {
            return response(error)
        } catch let error as RateLimitedError {
            var limited = response(error.refusal)
            limited.headers[.retryAfter] = "\(error.retryAfter)"
            return limited
        } catch is NIOTooManyBytesError {
            return response(JamError(.tooLarge, "the body is larger than \(context.maxBodyBytes) bytes"))
        } catch let error as HTTPParserError {
            // The body's framing broke (a bad chunk, the client gone mid-body): the client's
            // doing, not the server's, and the connection can carry no further request.
            context.logger.debug("a request body could not be read", metadata: ["error": "\(error.debugDescription)"])
            var answer = response(JamError(.malformed, "the body is not valid HTTP/1.1: \(error.debugDescription)"))
            answer.headers[.connection] = "close"
            return answer
        } catch let error as HTTPError {
            let code: ErrorCode
            switch error.status.code {
            case 404: code = .notFound
            case 405: code = .methodNotAllowed
            case 401: code = .unauthorized
            case 403: code = .forbidden
            case 413: code = .tooLarge
            case 429: code = .rateLimited
            case 400..<500: code = .malformed
            default: code = .internal
            }
            let message = error.body ?? Self.words(for: code, request, allow: error.headers[.allow], reason: error.status.reasonPhrase)
            var answer = response(JamError(code, message), status: error.status)
            // What the error says beside its status (a 416's `Content-Range`) stays with it.
            for field in error.headers where answer.headers[field.name] == nil { answer.headers.append(field) }
            return answer
        } catch {
            context.logger.error("request failed", metadata: ["error": .loggable(error), "http.path": "\(RequestLogMiddleware.shown(request.uri.path))"])
            return response(JamError(.internal, "the server failed to handle the request"))
        }
    }

    /// What an error the framework raised without words says.
    private static func words(for code: ErrorCode, _ request: Request, allow: String?, reason: String) -> String {
        switch code {
        case .notFound: "no route \(request.method) \(request.uri.path)"
        case .methodNotAllowed: "\(request.uri.path) does not take \(request.method)\(allow.map { "; it takes \($0)" } ?? "")"
        default: reason
        }
    }

    func response(_ error: JamError, status: HTTPResponse.Status? = nil) -> Response {
        let body = self.body(error)
        var headers: HTTPFields = [.contentType: "application/json"]
        if let wait = error.retryAfterMs {
            // Whole seconds, rounded up, so a client that waits that long is not refused again.
            headers[.retryAfter] = "\(max(1, (wait + 999) / 1000))"
        }
        return Response(
            status: status ?? HTTPResponse.Status(code: error.code.httpStatus),
            headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

import Foundation
