import Foundation

/// A database of its own for one run, in the PostgreSQL cluster `--database` names (created
/// with `psql`, dropped afterwards), so nodes start on an empty store.
struct BenchDatabase: Sendable {
    /// The new database's URL.
    let url: String
    private let admin: String
    private let name: String

    /// Failure to create or drop.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Creates `jam_bench_<random>` in the cluster of `url` (a `postgres://` URL on loopback).
    static func create(in url: String) async throws -> BenchDatabase {
        guard var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true,
            let host = components.host, host.hasPrefix("127.") || host == "localhost"
        else {
            throw Failure(description: "--database must be a postgres:// URL on loopback, got \(url)")
        }
        let name = "jam_bench_\(UUID().uuidString.prefix(8).lowercased())"
        try await psql(url, "CREATE DATABASE \(name)")
        components.path = "/\(name)"
        guard let made = components.string else { throw Failure(description: "cannot build the database URL") }
        return BenchDatabase(url: made, admin: url, name: name)
    }

    /// Drops the database (the nodes must have stopped).
    func drop() async {
        do {
            try await Self.psql(admin, "DROP DATABASE IF EXISTS \(name)")
        } catch {
            Console.line("warning: \(error)")
        }
    }

    private static func psql(_ url: String, _ sql: String) async throws {
        let candidates = ["/usr/bin/psql"] + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted().reversed().map {
            "/usr/lib/postgresql/\($0)/bin/psql"
        }
        guard let psql = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "psql not found (Debian's postgresql-client)")
        }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("jam-bench-psql-\(getpid()).log").path
        let child = try ChildProcess.start(psql, [url, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql], logPath: log)
        let deadline = ContinuousClock.now + .seconds(30)
        while child.isRunning(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let output = child.log()
        do {
            try FileManager.default.removeItem(atPath: log)
        } catch {
            Console.line("warning: could not remove \(log): \(error.localizedDescription)")
        }
        if child.isRunning() {
            await child.stop()
            throw Failure(description: "psql did not finish: \(sql)")
        }
        if output.contains("ERROR") { throw Failure(description: "psql failed: \(output)") }
    }
}
