import Foundation
import Hummingbird
@testable import JamServer
import JamProtocol
import JamTestSupport
import Testing

/// A path the server has, asked with a method it does not take: 405 with `Allow`, not 404.
@Suite struct MethodNotAllowedTests {
    static let routes: [(path: RouterPath, method: HTTPRequest.Method)] = [
        ("/api/v1/sessions", .post),
        ("/api/v1/sessions/join", .post),
        ("/api/v1/sessions/:id", .get),
        ("/api/v1/sessions/:id", .patch),
        ("/api/v1/sessions/:id", .delete),
        ("/api/v1/sessions/:id/queue/:itemId/vote", .put),
        ("/api/v1/sessions/:id/queue/:itemId/vote", .delete),
        ("/media/**", .get),
    ]

    static func methods(_ path: String) -> [String] {
        MethodNotAllowedMiddleware.methods(for: path, in: routes).map(\.rawValue)
    }

    @Test func aPathRoutesHaveListsTheirMethodsInNameOrder() {
        #expect(Self.methods("/api/v1/sessions/3f0c") == ["DELETE", "GET", "PATCH"])
        #expect(Self.methods("/api/v1/sessions/3f0c/queue/item-1/vote") == ["DELETE", "PUT"])
        #expect(Self.methods("/api/v1/sessions/") == ["POST"])
    }

    @Test func aNameTakesThePathBeforeAParameterAsTheRouterDoes() {
        // The router takes `join` to its own route, never to `:id`'s.
        #expect(Self.methods("/api/v1/sessions/join") == ["POST"])
    }

    @Test func aPathNoRouteHasListsNothing() {
        #expect(Self.methods("/api/v1/sessions/3f0c/queue").isEmpty)
        #expect(Self.methods("/api/v1/sessions/3f0c/queue/item-1/vote/again").isEmpty)
        #expect(Self.methods("/api/v1").isEmpty)
        #expect(Self.methods("/").isEmpty)
    }

    @Test func aRecursiveWildcardTakesEveryPartLeft() {
        #expect(Self.methods("/media/a/b/c.mp3") == ["GET"])
        // As the router: `**` takes one part at least.
        #expect(Self.methods("/media").isEmpty)
    }

    @Test func theServerAnswersAMethodAPathDoesNotTakeWith405AndTheMethodsItTakes() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let skip = try await server.api.request("DELETE", "/api/v1/sessions/\(id)/skip", token: host.token)
            #expect(skip.status == 405)
            #expect(skip.headers["allow"] == "POST")
            #expect(skip.errorCode == .methodNotAllowed)
            #expect(skip.text.contains("/api/v1/sessions/\(id)/skip does not take DELETE; it takes POST"), "\(skip.text)")
            let session = try await server.api.request("PUT", "/api/v1/sessions/\(id)", token: host.token, body: Data("{}".utf8))
            #expect(session.status == 405)
            #expect(session.headers["allow"] == "DELETE, GET, HEAD, PATCH", "the router answers HEAD where it answers GET")
            // Without a token as with one: the path and method decide.
            #expect(try await server.api.request("DELETE", "/api/v1/sessions/join").status == 405)
            // The realtime socket's path, which its upgrade serves before the router, counts too.
            let socketPath = try await server.api.request("POST", "/api/v1/sessions/\(id)/realtime", token: host.token, body: Data("{}".utf8))
            #expect(socketPath.status == 405, "\(socketPath.text)")
            #expect(socketPath.headers["allow"] == "GET")
            // A path nobody has is still 404, and a method the path takes is served.
            let nowhere = try await server.api.request("DELETE", "/api/v1/nothing-here", token: host.token)
            #expect(nowhere.status == 404)
            #expect(nowhere.errorCode == .notFound)
            #expect(nowhere.headers["allow"] == nil)
            #expect(try await server.api.request("GET", "/api/v1/sessions/\(id)", token: host.token).status == 200)
        }
    }

    @Test func aGetRouteAnswersHeadWithItsHeadersAndNoBody() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let svg = "/api/v1/qr.svg?text=OPENJAM"
            let get = try await server.api.request("GET", svg)
            let head = try await server.api.request("HEAD", svg)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["content-type"] == "image/svg+xml")
            #expect(head.headers["content-length"] == String(get.body.count), "GET's length, not the empty body's")
            #expect(try await server.api.request("HEAD", "/api/v1/sessions/\(id)", token: host.token).status == 200)
            // Refused as GET is: without a token, and for a session that is not there.
            #expect(try await server.api.request("HEAD", "/api/v1/sessions/\(id)").status == 401)
            #expect(try await server.api.request("HEAD", "/api/v1/sessions/\(UUID())", token: host.token).status == 404)
            // A path without GET takes no HEAD, and the realtime path answers only its upgrade.
            let skip = try await server.api.request("HEAD", "/api/v1/sessions/\(id)/skip", token: host.token)
            #expect(skip.status == 405)
            #expect(skip.headers["allow"] == "POST")
            let socketPath = try await server.api.request("HEAD", "/api/v1/sessions/\(id)/realtime", token: host.token)
            #expect(socketPath.status == 405)
            #expect(socketPath.headers["allow"] == "GET")
        }
    }
}
