import Foundation
import Hummingbird
import JamCore
import JamServer
import Logging
import ServiceLifecycle

/// A real OpenJam server on an ephemeral loopback port, for the length of a test.
struct TestServer: Sendable {
    let port: Int
    let dataDirectory: URL

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var wsBaseURL: String { "ws://127.0.0.1:\(port)" }
    var api: RestClient { RestClient(baseURL: baseURL) }

    /// Timing fast enough for tests: short leads, one-second prepare-ahead.
    static let fastTiming = Timing(minLeadMs: 100, maxLeadMs: 1000, prepareAheadMs: 400, commitMarginMs: 50)

    /// A fresh, empty data folder.
    static func makeDataDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("openjam-test-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `body` against a server, then shuts the server down gracefully.
    static func with<T: Sendable>(
        dataDirectory: URL = makeDataDirectory(),
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestServer) async throws -> T
    ) async throws -> T {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: dataDirectory, secret: "test-secret-0123456789abcdef0123456789", logLevel: .warning, timing: fastTiming)
        configure(&configuration)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await buildApplication(configuration) { port in portContinuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "test")))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw TestFailure("the server did not start") }
            let server = TestServer(port: port, dataDirectory: dataDirectory)
            do {
                let result = try await body(server)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }
}

/// A failure raised by test support code.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
