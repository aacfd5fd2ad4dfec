import Prometheus

extension PrometheusMetricsFactory {
    /// The factory `jam serve` bootstraps: Prometheus' defaults, with buckets that fit
    /// OpenJam's histograms. A group commit takes well under 5 ms (the default's first bucket)
    /// on a local disk, and most batches hold a few writes.
    package static func openJam(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["openjam_store_commit_seconds"] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2_500), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2_500), .seconds(10),
        ]
        factory.valueHistogramBuckets["openjam_store_batch_writes"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024, 2_048, 4_096]
        return factory
    }
}
