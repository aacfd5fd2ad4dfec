import Foundation
import JamTestSupport
import Synchronization

/// Several `jam serve` processes on one fresh PostgreSQL database, behind HAProxy run with
/// the repository's own `deploy/haproxy.cfg`.
final class TestCluster: Sendable {
    let nodes: [ServerProcess]
    let balancer: ChildProcess
    let balancerPort: Int
    let database: String

    /// The repository's root (for `deploy/`).
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// HAProxy from Debian: `JAM_TEST_HAPROXY`, else found on the PATH.
    static var haproxy: URL? {
        if let path = ProcessInfo.processInfo.environment["JAM_TEST_HAPROXY"], !path.isEmpty { return URL(fileURLWithPath: path) }
        for folder in ["/usr/sbin", "/usr/bin", "/usr/local/sbin"] where FileManager.default.isExecutableFile(atPath: "\(folder)/haproxy") {
            return URL(fileURLWithPath: "\(folder)/haproxy")
        }
        return nil
    }

    /// Whether cluster tests run: PostgreSQL and HAProxy are here, or every suite is required.
    static var enabled: Bool {
        (TestPostgres.url != nil && haproxy != nil) || ProcessInfo.processInfo.environment["JAM_REQUIRE_ALL"] == "1"
    }

    private init(nodes: [ServerProcess], balancer: ChildProcess, balancerPort: Int, database: String) {
        self.nodes = nodes
        self.balancer = balancer
        self.balancerPort = balancerPort
        self.database = database
    }

    /// Starts `count` nodes (three at most: the config names three), each with `arguments`
    /// and `environment` added, and the balancer.
    static func start(
        nodes count: Int = 3, arguments: [String] = [], environment nodeEnvironment: [String: String] = [:]
    ) async throws -> TestCluster {
        guard let haproxy else { throw TestFailure("cluster tests need haproxy (JAM_TEST_HAPROXY; scripts/test.sh installs it)") }
        let location = try await TestPostgres.freshDatabase()
        let url = try location.url
        var nodes: [ServerProcess] = []
        do {
            for _ in 0..<count {
                nodes.append(
                    try await ServerProcess(
                        dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", url, "--trusted-proxy", "127.0.0.1"] + arguments,
                        environment: nodeEnvironment))
            }
            let port = try LoopbackPort.free()
            let directory = TestServer.makeDataDirectory()
            var environment = ProcessInfo.processInfo.environment
            environment["JAM_LB_BIND"] = "127.0.0.1:\(port)"
            for slot in 1...3 {
                // A missing node points at a port nobody listens on: HAProxy marks it down.
                environment["JAM_NODE\(slot)"] = "127.0.0.1:\(slot <= nodes.count ? nodes[slot - 1].port : 9)"
            }
            let balancer = try await ChildProcess.start(
                haproxy, arguments: ["-db", "-f", repository.appendingPathComponent("deploy/haproxy.cfg").path], environment: environment,
                logFile: directory.appendingPathComponent("haproxy.log"))
            let cluster = TestCluster(nodes: nodes, balancer: balancer, balancerPort: port, database: url)
            try await cluster.waitForBalancer()
            return cluster
        } catch {
            for node in nodes { _ = try? await node.kill() }
            throw error
        }
    }

    /// The balancer, as clients see the service.
    var front: TestServer { TestServer(port: balancerPort, dataDirectory: nodes[0].dataDirectory) }

    /// Node `n` (0-based), bypassing the balancer.
    func node(_ n: Int) -> TestServer { nodes[n].server }

    private func waitForBalancer() async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let response = try? await front.api.request("GET", "/healthz"), response.status == 200 { return }
            if !balancer.isRunning { throw TestFailure("haproxy exited") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("haproxy did not answer on \(balancerPort)")
    }

    /// Stops every node still running and the balancer.
    func stop() async {
        for node in nodes where node.child.isRunning { _ = try? await node.terminate() }
        balancer.signal(SIGTERM)
        _ = try? await balancer.waitForExit()
    }

    /// Runs `body` against a started cluster and stops it afterwards, also when `body` throws.
    static func with<T>(
        nodes: Int = 3, arguments: [String] = [], environment: [String: String] = [:], _ body: (TestCluster) async throws -> T
    ) async throws -> T {
        let cluster = try await start(nodes: nodes, arguments: arguments, environment: environment)
        do {
            let result = try await body(cluster)
            await cluster.stop()
            return result
        } catch {
            await cluster.stop()
            throw error
        }
    }
}
