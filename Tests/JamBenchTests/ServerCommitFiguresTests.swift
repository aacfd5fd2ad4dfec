import CoreMetrics
import Prometheus
import Testing

import JamServer
@testable import jam_bench

/// `jam-bench fanout` reports the server's commit figures from two reads of its `/metrics`;
/// these feed the reader text written by the factory `jam serve` bootstraps, so a change of
/// the server's buckets or of the exporter's format fails here rather than skewing a figure.
struct ServerCommitFiguresTests {
    /// A registry set up as `jam serve` sets up its own, with the store's commit timer and counters.
    private struct Server {
        let registry = PrometheusCollectorRegistry()
        let commits: any TimerHandler
        let batches: any CounterHandler

        init() {
            let factory = PrometheusMetricsFactory.openJam(registry: registry)
            commits = factory.makeTimer(label: "openjam_store_commit_seconds", dimensions: [])
            batches = factory.makeCounter(label: "openjam_store_batches_total", dimensions: [])
        }

        func commit(microseconds: Int64) {
            commits.recordNanoseconds(microseconds * 1_000)
            batches.increment(by: 1)
        }

        var scrape: MetricsScrape { MetricsScrape(text: registry.emitToString()) }
    }

    @Test func commitsOverTheSlowBoundAreCountedBetweenTwoReads() throws {
        let server = Server()
        server.commit(microseconds: 3_000)  // before the phase: not counted
        let before = try #require(server.scrape.histogram("openjam_store_commit_seconds"))
        for microseconds: Int64 in [400, 600, 2_400, 2_600, 4_000, 9_000] { server.commit(microseconds: microseconds) }
        let after = try #require(server.scrape.histogram("openjam_store_commit_seconds"))

        let phase = after.since(before)
        #expect(phase.count == 6)
        #expect(phase.count(above: PhaseResult.slowCommitSeconds) == 3)
        #expect(phase.slowestWithin == 0.010)
        let mean = try #require(phase.mean)
        #expect(abs(mean - 0.0031666) < 0.000001)
    }

    @Test func theSlowBoundIsOneOfTheServersBuckets() throws {
        let server = Server()
        server.commit(microseconds: 2_500)  // at the bound: not over it
        let times = try #require(server.scrape.histogram("openjam_store_commit_seconds"))
        #expect(times.buckets.contains { $0.upperBound == PhaseResult.slowCommitSeconds })
        #expect(times.count(above: PhaseResult.slowCommitSeconds) == 0)
        #expect(times.slowestWithin == PhaseResult.slowCommitSeconds)
        #expect(times.buckets.last?.upperBound == .infinity)
    }

    @Test func aCommitPastTheLastBucketIsWithinInfinity() throws {
        let server = Server()
        server.commit(microseconds: 20_000_000)
        let times = try #require(server.scrape.histogram("openjam_store_commit_seconds"))
        #expect(times.slowestWithin == .infinity)
        #expect(times.count(above: 10) == 1)
    }

    @Test func countersAreReadByName() {
        let server = Server()
        #expect(server.scrape.value("openjam_store_batches_total") == 0)
        server.commit(microseconds: 100)
        server.commit(microseconds: 100)
        #expect(server.scrape.value("openjam_store_batches_total") == 2)
        #expect(server.scrape.value("openjam_store_rows_total") == nil)
    }

    @Test func aHistogramWithoutObservationsHasNoMeanAndNoSlowest() throws {
        let times = try #require(Server().scrape.histogram("openjam_store_commit_seconds"))
        #expect(times.count == 0)
        #expect(times.mean == nil)
        #expect(times.slowestWithin == nil)
    }

    @Test func aMissingHistogramIsNil() {
        #expect(Server().scrape.histogram("openjam_store_batch_writes") == nil)
        #expect(MetricsScrape(text: "").histogram("openjam_store_commit_seconds") == nil)
    }

    @Test func labelValuesWithSpacesKeepTheirSample() {
        let text = """
            # HELP errors Refused commands.
            # TYPE errors counter
            errors{code="not a member"} 7
            errors{code="rateLimited"} 2 1700000000000
            broken_line
            gauge_without_number abc
            plain 1.5
            """
        let scrape = MetricsScrape(text: text)
        #expect(scrape.value(#"errors{code="not a member"}"#) == 7)
        #expect(scrape.value(#"errors{code="rateLimited"}"#) == 2)
        #expect(scrape.value("plain") == 1.5)
        #expect(scrape.value("broken_line") == nil)
        #expect(scrape.value("gauge_without_number") == nil)
    }
}
