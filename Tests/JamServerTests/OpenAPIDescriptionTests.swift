import Foundation
import JamProtocol
import JamTestSupport
import Synchronization
import Testing

/// `/openapi.json` describes the REST routes the server really has (schemathesis, in
/// scripts/api-check.sh, then checks every answer against it).
@Suite struct OpenAPIDescriptionTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/JamWebClient/Web/openapi.json").standardizedFileURL

    /// "GET /api/v1/sessions/{id}" for every operation the description lists.
    static func describedOperations(_ data: Data) throws -> Set<String> {
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((document["openapi"] as? String)?.hasPrefix("3.1") == true)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        return Set(paths.flatMap { path, item in item.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" } })
    }

    @Test func everyRouteIsDescribedAndEveryDescribedOperationIsARoute() async throws {
        let registered = Mutex<[String]>([])
        let served = try await TestServer.with(onRoutes: { routes in registered.withLock { $0 = routes } }) { server in
            try await server.api.request("GET", "/openapi.json")
        }
        #expect(served.status == 200)
        #expect(served.headers["content-type"]?.hasPrefix("application/json") == true, "\(served.headers)")
        let described = try Self.describedOperations(served.body)
        #expect(served.body == (try Data(contentsOf: Self.file)), "the server serves the description in the repository")
        // The realtime upgrade is served below the router, by the socket handler.
        let routes = Set(registered.withLock { $0 }).union(["GET /api/v1/sessions/{id}/realtime"])
        #expect(routes.subtracting(described).isEmpty, "routes missing from openapi.json: \(routes.subtracting(described).sorted())")
        // The router answers HEAD wherever it answers GET; the description names it where a
        // client is expected to use it.
        let heads = routes.filter { $0.hasPrefix("GET ") && !$0.hasSuffix("/realtime") }.map { "HEAD " + $0.dropFirst(4) }
        let answered = routes.union(heads)
        #expect(described.subtracting(answered).isEmpty, "openapi.json describes routes the server lacks: \(described.subtracting(answered).sorted())")
    }
}
