import Hummingbird

/// Answers a request whose path a route has, but not with the request's method: 405 with
/// `Allow` (RFC 9110 §15.5.6), where the router alone answers 404 for both. Added after every
/// route, it sits in front of the router's not-found answer only (a router middleware applies
/// to the routes added after it), so a request a route takes never passes through it.
package struct MethodNotAllowedMiddleware: RouterMiddleware {
    package typealias Context = JamRequestContext

    /// Each route's path with its method.
    let routes: [(path: RouterPath, method: HTTPRequest.Method)]
    /// The paths served before the router, as WebSocket upgrades, whose plain request is told
    /// to upgrade (empty where the profile's original server answers it as not found).
    let upgrades: [(path: RouterPath, method: HTTPRequest.Method)]

    /// Takes `routes`, the router's routes once every one is added, with HEAD beside each GET
    /// when the router answers it (`headAsGet`), and `beside` them the paths served before the
    /// router (the realtime socket's upgrade, which answers GET only); with `upgrades`, a plain
    /// request of those paths is answered 426.
    package init(
        routes: [Router<JamRequestContext>.RouteDescription], headAsGet: Bool, beside: [(path: RouterPath, method: HTTPRequest.Method)] = [],
        upgrades: Bool = false
    ) {
        let routed = routes.map { ($0.path, $0.method) }
        let heads = headAsGet ? routed.filter { $0.1 == .get }.map { ($0.0, HTTPRequest.Method.head) } : []
        self.routes = routed + heads + beside
        self.upgrades = upgrades ? beside : []
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        let allowed = Self.methods(for: request.uri.path, in: routes)
        guard !allowed.isEmpty else { return try await next(request, context) }
        guard !allowed.contains(request.method) else {
            // The socket's path, reached here only as no upgrade (RFC 9110 §15.5.22): a proxy
            // that drops the `Upgrade` headers is told so, not that the path does not exist.
            guard Self.methods(for: request.uri.path, in: upgrades).contains(request.method) else { return try await next(request, context) }
            throw HTTPError(
                .upgradeRequired, headers: [.upgrade: "websocket", .connection: "Upgrade", .secWebSocketVersion: "13"],
                message: "\(request.uri.path) opens a WebSocket: send Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key")
        }
        throw HTTPError(.methodNotAllowed, headers: [.allow: allowed.map(\.rawValue).joined(separator: ", ")])
    }

    /// The methods of the route path the router takes `path` to, in name order; empty when no
    /// route path matches. Where several match, the router prefers a name to a parameter at
    /// the first part they differ in (`sessions/join` over `sessions/:id`), and so does this.
    static func methods(for path: String, in routes: [(path: RouterPath, method: HTTPRequest.Method)]) -> [HTTPRequest.Method] {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        let matching = routes.filter { matches(Array($0.path.components), parts) }
        guard let best = matching.map({ rank(of: $0.path) }).min(by: { $0.lexicographicallyPrecedes($1) }) else { return [] }
        let methods = Set(matching.filter { rank(of: $0.path) == best }.map(\.method))
        return methods.sorted { $0.rawValue < $1.rawValue }
    }

    /// Whether a route's path elements match the request path's parts.
    private static func matches(_ elements: [RouterPath.Element], _ parts: [Substring]) -> Bool {
        for (index, element) in elements.enumerated() {
            // `**` takes every part that is left, one at least.
            if element.description == "**" { return index < parts.count }
            guard index < parts.count, element ~= parts[index] else { return false }
        }
        return elements.count == parts.count
    }

    /// How general each part of a route path is: a name 0, a parameter or wildcard 1, `**` 2.
    private static func rank(of path: RouterPath) -> [Int] {
        path.components.map { element in
            if element.description == "**" { return 2 }
            return element == element.description ? 0 : 1
        }
    }
}
