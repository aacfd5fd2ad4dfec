import ArgumentParser
import Foundation
import JamServer
import Logging
import Metrics
import Prometheus

/// `jam serve`: runs the server with an embedded SQLite store.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the OpenJam server.",
        discussion: """
            Every option can also be set with an environment variable: JAM_HOST, JAM_PORT,
            JAM_DATA_DIR, JAM_SECRET, JAM_LOG_LEVEL. Options win over the environment.
            """
    )

    @Option(help: "Address to listen on (JAM_HOST).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (JAM_PORT).")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Folder for the database and the token secret (JAM_DATA_DIR).")
    var dataDir: String?

    @Option(help: "Token signing secret; generated and kept in the data folder when absent (JAM_SECRET).")
    var secret: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (JAM_LOG_LEVEL).")
    var logLevel: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var configuration = ServerConfiguration()
        configuration.host = host ?? environment["JAM_HOST"] ?? configuration.host
        if let value = port ?? environment["JAM_PORT"].flatMap(Int.init) {
            configuration.port = value
        } else if let raw = environment["JAM_PORT"] {
            throw ValidationError("JAM_PORT must be a port number, got \"\(raw)\"")
        }
        guard (0...65535).contains(configuration.port) else { throw ValidationError("the port must be between 0 and 65535") }
        if let dir = dataDir ?? environment["JAM_DATA_DIR"] {
            configuration.dataDirectory = URL(fileURLWithPath: dir)
        }
        configuration.secret = secret ?? environment["JAM_SECRET"]
        if let level = logLevel ?? environment["JAM_LOG_LEVEL"] {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ValidationError("unknown log level \"\(level)\"; use trace, debug, info, notice, warning, error or critical")
            }
            configuration.logLevel = parsed
        }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        let host = configuration.host
        let dataDirectory = configuration.dataDirectory.path
        let app = try await buildApplication(configuration, metrics: registry) { port in
            let shown = host == "0.0.0.0" ? "127.0.0.1" : host
            // Unbuffered, so scripts waiting for this line see it at once.
            FileHandle.standardOutput.write(Data("OpenJam listening on http://\(shown):\(port)  (data: \(dataDirectory))\n".utf8))
        }
        try await app.runService()
    }
}
