import Foundation
import JamProtocol
import Metrics

/// The server's own metrics (exported at `/metrics` when a Prometheus registry is bootstrapped).
enum Metrics {
    static let commands = Counter(label: "openjam_commands_total")
    static let broadcasts = Counter(label: "openjam_events_broadcast_total")
    static let deliveries = Counter(label: "openjam_frames_delivered_total")
    static let slowConsumers = Counter(label: "openjam_slow_consumers_closed_total")
    static let connections = Meter(label: "openjam_realtime_connections")
    /// Connections closed at once because their address held its cap of open connections.
    static let connectionsRefused = Counter(label: "openjam_connections_refused_total")
    static let liveSessions = Gauge(label: "openjam_live_sessions")
    static let persistedBatches = Counter(label: "openjam_store_batches_total")
    static let persistedRows = Counter(label: "openjam_store_rows_total")
    /// Writes per group commit.
    static let batchWrites = Recorder(label: "openjam_store_batch_writes", aggregate: true)
    /// From a batch's hand-over to the store to its durability.
    static let commitDuration = Timer(label: "openjam_store_commit_seconds", preferredDisplayUnit: .seconds)
    /// Devices' sync reports received (clock error, playback error, latency).
    static let syncReports = Counter(label: "openjam_sync_reports_total")

    /// Refused commands, one counter per error code.
    private static let commandErrors: [ErrorCode: Counter] = Dictionary(
        uniqueKeysWithValues: ErrorCode.allCases.map { ($0, Counter(label: "openjam_command_errors_total", dimensions: [("code", $0.rawValue)])) })

    /// Creates every metric now, so `/metrics` carries each series from the start (at 0) and a
    /// dashboard or alert sees 0 rather than no data until the first event. Static lets are
    /// made on first use, so this must run after the metrics system is bootstrapped.
    static func createAll() {
        _ = (commands, broadcasts, deliveries, slowConsumers, connections, connectionsRefused, liveSessions)
        _ = (persistedBatches, persistedRows, batchWrites, commitDuration, syncReports, commandErrors)
    }

    /// Counts a refused command (or message) by its error code.
    static func commandFailed(_ error: any Error) {
        let code = (error as? JamError)?.code ?? .internal
        commandErrors[code]?.increment()
    }
}
