import Foundation
import JamMedia
import Synchronization
import Hummingbird
import JamCore
import JamServer
import Logging
import ServiceLifecycle

/// A real OpenJam server on an ephemeral loopback port, for the length of a test.
public struct TestServer: Sendable {
    public let port: Int
    public let dataDirectory: URL

    public init(port: Int, dataDirectory: URL) {
        self.port = port
        self.dataDirectory = dataDirectory
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var wsBaseURL: String { "ws://127.0.0.1:\(port)" }

    /// Timing fast enough for tests: short leads, a 400 ms prepare-ahead.
    public static let fastTiming = Timing(minLeadMs: 100, maxLeadMs: 1000, prepareAheadMs: 400, commitMarginMs: 50)

    /// A fresh, empty data folder.
    public static func makeDataDirectory() -> URL {
        do {
            return try TestFolders.make("data")
        } catch {
            fatalError("could not make a data folder for a test: \(error)")
        }
    }

    /// The token secret every test server signs with.
    public static let secret = "test-secret-0123456789abcdef0123456789"

    /// Runs `body` against a server, then shuts the server down gracefully. Without a
    /// `dataDirectory` the server gets a fresh one, removed afterwards (a test that restarts
    /// a server passes its own and keeps it). `JAM_TEST_LOG_LEVEL` (`debug`, say) sets the
    /// servers' log level, so a test that hangs shows which service has not stopped.
    public static func with<T: Sendable>(
        dataDirectory: URL? = nil,
        port: Int = 0,
        store: (any SessionStore)? = nil,
        clock: any ServerClock = SystemClock(),
        configure: (inout ServerConfiguration) -> Void = { _ in },
        onRoutes: ([String]) -> Void = { _ in },
        _ body: @Sendable (TestServer) async throws -> T
    ) async throws -> T {
        guard let dataDirectory else {
            let fresh = makeDataDirectory()
            defer { try? FileManager.default.removeItem(at: fresh) }
            return try await with(dataDirectory: fresh, port: port, store: store, clock: clock, configure: configure, onRoutes: onRoutes, body)
        }
        var configuration = ServerConfiguration(host: "127.0.0.1", port: port, dataDirectory: dataDirectory, secret: secret, logLevel: .warning, timing: fastTiming)
        configuration.musicFolders = [try DemoFolder.shared()]
        configuration.reserveStoreLog = false
        configure(&configuration)
        if let level = ProcessInfo.processInfo.environment["JAM_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) { configuration.logLevel = level }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await buildApplication(
            configuration, clock: clock, store: store, onServerRunning: { port in portContinuation.yield(port) }, onRoutes: onRoutes)
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "test")))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                // A server that stops, or never starts, ends the wait for its port too.
                defer { portContinuation.finish() }
                try await group.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                // The group's error says why the server stopped.
                try await tasks.waitForAll()
                throw TestFailure("the server stopped before it took connections")
            }
            let server = TestServer(port: port, dataDirectory: dataDirectory)
            do {
                if store is PostgresSessionStore { await server.waitForDatabase() }
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

extension TestServer {
    /// Waits, up to 20 s, until the server holds its database connection (`/healthz` says
    /// 200): a node takes requests as it starts, and refuses them once its first connection
    /// attempt has taken 3 s, which a machine busy with the other suites can take. A server
    /// still not there then is left to the test, which sees why.
    func waitForDatabase() async {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            if let health = try? await RawConnection.answer(to: request, port: port), health.hasPrefix("HTTP/1.1 200") { return }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                return
            }
        }
    }
}

/// A failure raised by test support code.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One demo library per test process, so servers need not synthesise it each time.
public enum DemoFolder {
    private static let folder = Mutex<URL?>(nil)

    /// The shared folder, made on first use.
    public static func shared() throws -> URL {
        try folder.withLock { existing in
            if let existing { return existing }
            let url = TestFolders.path("demo")
            try DemoLibrary.install(into: url)
            existing = url
            return url
        }
    }
}
