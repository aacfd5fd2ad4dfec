import Foundation
import Hummingbird
import JamProtocol
import Logging
import NIOCore

/// One structured log line per HTTP request: method, path, status, duration, and the
/// member and session it concerned when the request names them.
package struct RequestLogMiddleware: RouterMiddleware {
    package typealias Context = JamRequestContext

    let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let response = try await next(request, context)
            log(request, context, status: response.status.code, code: nil, started: started)
            return response
        } catch let error as JamError {
            log(request, context, status: error.code.httpStatus, code: error.code, started: started)
            throw error
        } catch let error as RateLimitedError {
            // Answered 429 by `ErrorMiddleware`; guessing join codes shows here as such.
            log(request, context, status: 429, code: .rateLimited, started: started)
            throw error
        } catch let error as NIOTooManyBytesError {
            log(request, context, status: 413, code: .tooLarge, started: started)
            throw error
        } catch let error as HTTPError {
            log(request, context, status: error.status.code, code: nil, started: started)
            throw error
        } catch {
            log(request, context, status: nil, code: nil, started: started)
            throw error
        }
    }

    private func log(_ request: Request, _ context: JamRequestContext, status: Int?, code: ErrorCode?, started: UInt64) {
        let path = request.uri.path
        var metadata: Logger.Metadata = [
            "http.method": "\(request.method)", "http.path": "\(Self.shown(path))",
            "http.status": "\(status.map(String.init) ?? "error")",
            "duration.ms": "\(String(format: "%.2f", Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6))",
        ]
        if case .user(let identity) = context.authentication { metadata["member.id"] = "\(identity.userId)" }
        if let session = Self.sessionId(in: path) { metadata["session.id"] = "\(session)" }
        if let code { metadata["error.code"] = "\(code.rawValue)" }
        logger.info("request", metadata: metadata)
    }

    /// `path` as the log shows it: an invite link's join code admits whoever reads it, so
    /// `/j/{code}` shows as `/j/:code`, however many slashes reach that route (the router
    /// skips empty segments, so `//j/CODE` opens the same page).
    static func shown(_ path: String) -> String {
        path.split(separator: "/").first == "j" ? "/j/:code" : path
    }

    /// The session id in `/api/v1/sessions/{id}…`, if the path has one.
    static func sessionId(in path: String) -> Substring? {
        let parts = path.split(separator: "/")
        guard parts.count >= 4, parts[0] == "api", parts[2] == "sessions", parts[3] != "join" else { return nil }
        return parts[3]
    }
}
