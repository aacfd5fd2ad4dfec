import Foundation
import HTTPTypes
import Hummingbird
import JamProtocol
import JamServer
import NIOCore
import NIOHTTP1

/// A failure answered the way QueueIT's backend answers it: a status and its words, or a
/// 422 with the list of what was wrong with the body.
struct QueueITError: Error, Sendable {
    var status: HTTPResponse.Status
    var message: String
    var issues: [ValidationIssue] = []

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A 422 listing `issues`, as its request validation writes it.
    static func validation(_ issues: [ValidationIssue]) -> QueueITError {
        var error = QueueITError(.unprocessableContent, "Validation error")
        error.issues = issues
        return error
    }

    static let noActiveSession = QueueITError(.notFound, "No active session")
    static let notHost = QueueITError(.forbidden, "You are not the host of this session")
    static let sessionNotFound = QueueITError(.notFound, "Session not found")
    static let codeInUse = QueueITError(.conflict, "This join code is already in use. Please choose another.")
    /// What its database's row policies answer for a song outside the caller's session.
    static let notInSession = QueueITError(.forbidden, "You don't have permission to perform this action. Make sure you've joined the session.")
}

/// One entry of a 422's `detail` list: `{type, loc, msg, input, ctx?}`.
struct ValidationIssue: Sendable, Equatable {
    /// A part of `loc`: a field name or an index.
    enum Location: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    var type: String
    var loc: [Location]
    var msg: String
    /// The offending value as JSON text ("null" when it was missing).
    var input: String
    /// Extra facts (`{"min_length": 4}`) as JSON text.
    var ctx: String?

    var json: [String: Any] {
        var object: [String: Any] = [
            "type": type, "msg": msg,
            "loc": loc.map { part -> Any in
                switch part {
                case .key(let key): key
                case .index(let index): index
                }
            },
            "input": (try? JSONSerialization.jsonObject(with: Data(input.utf8), options: .fragmentsAllowed)) ?? NSNull(),
        ]
        if let ctx, let value = try? JSONSerialization.jsonObject(with: Data(ctx.utf8), options: .fragmentsAllowed) { object["ctx"] = value }
        return object
    }
}

/// Answers every failure as QueueIT's exception handlers do, `{"error", "status_code",
/// "request_id"}` (with `detail`: the list on a 422, the same words otherwise, for clients
/// that read FastAPI's default), and gives every response an `X-Request-ID`.
struct QueueITErrorMiddleware: RouterMiddleware {
    typealias Context = JamRequestContext

    func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        let requestId = request.headers[.requestID].map { String($0.prefix(128)) } ?? UUID().uuidString.lowercased()
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as QueueITError {
            response = Self.response(error, requestId: requestId)
        } catch let error as JamError {
            response = Self.response(QueueITError(HTTPResponse.Status(code: error.code.httpStatus), error.message), requestId: requestId)
        } catch let error as RateLimitedError {
            response = Self.response(QueueITError(.tooManyRequests, "Too Many Requests"), requestId: requestId)
            response.headers[.retryAfter] = "\(error.retryAfter)"
        } catch is NIOTooManyBytesError {
            response = Self.response(QueueITError(.contentTooLarge, "the body is larger than \(context.maxBodyBytes) bytes"), requestId: requestId)
        } catch let error as HTTPParserError {
            // Its server answers a body it cannot parse with 400 and closes the connection.
            context.logger.debug("a request body could not be read", metadata: ["error": "\(error.debugDescription)"])
            response = Self.response(QueueITError(.badRequest, "Invalid HTTP request received."), requestId: requestId)
            response.headers[.connection] = "close"
        } catch let error as HTTPError {
            // Unknown routes and methods: the words its framework uses.
            response = Self.response(QueueITError(error.status, error.body ?? error.status.reasonPhrase), requestId: requestId)
        } catch {
            context.logger.error("request failed", metadata: ["error": .loggable(error), "http.path": "\(request.uri.path)"])
            response = Self.response(QueueITError(.internalServerError, "Internal server error"), requestId: requestId)
        }
        response.headers[.requestID] = requestId
        return response
    }

    static func response(_ error: QueueITError, requestId: String) -> Response {
        var body: [String: Any] = ["error": error.message, "status_code": error.status.code, "request_id": requestId]
        // Only its validation handler writes `detail`; every other handler writes these three.
        if !error.issues.isEmpty { body["detail"] = error.issues.map(\.json) }
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Response(status: error.status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension HTTPField.Name {
    /// `X-Request-ID`, echoed or minted on every response.
    static let requestID = HTTPField.Name("X-Request-ID")!
}
