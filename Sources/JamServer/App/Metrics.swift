import Metrics

/// The server's own metrics (exported at `/metrics` when a Prometheus registry is bootstrapped).
enum Metrics {
    static let commands = Counter(label: "openjam_commands_total")
    static let commandErrors = Counter(label: "openjam_command_errors_total")
    static let broadcasts = Counter(label: "openjam_events_broadcast_total")
    static let deliveries = Counter(label: "openjam_frames_delivered_total")
    static let slowConsumers = Counter(label: "openjam_slow_consumers_closed_total")
    static let connections = Meter(label: "openjam_realtime_connections")
    static let liveSessions = Gauge(label: "openjam_live_sessions")
    static let persistedBatches = Counter(label: "openjam_store_batches_total")
    static let persistedRows = Counter(label: "openjam_store_rows_total")
}
