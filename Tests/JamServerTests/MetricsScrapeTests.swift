import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// `/metrics` of a running `jam serve`, scraped as Prometheus would.
@Suite struct MetricsScrapeTests {
    /// Every sample line of a Prometheus text exposition, by name with its labels.
    static func samples(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }

    @Test func commandsErrorsByCodeCommitsSocketsSessionsAndSyncReportsAreCounted() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await ServerProcess.with(dataDirectory: folder) { process in
            let server = process.server
            let (party, code) = try await Party.withARefusedVote(server)
            let eli = party.guests[0].socket
            eli.send(.syncReport(SyncReport(epoch: 1, offsetMs: 0, errorMs: 2, driftMs: 0)), id: "report")
            _ = try await eli.next("report ack") { $0.ack?.id == "report" || $0.error?.id == "report" }

            let response = try await server.api.request("GET", "/metrics")
            #expect(response.status == 200)
            let values = Self.samples(response.text)
            #expect((values["openjam_commands_total"] ?? 0) >= 3) // create, join, add (and connects)
            #expect(values[#"openjam_command_errors_total{code="\#(code.rawValue)"}"#] == 1)
            #expect(values[#"openjam_command_errors_total{code="rateLimited"}"#] == 0)
            #expect((values["openjam_store_batches_total"] ?? 0) >= 1)
            #expect((values["openjam_store_commit_seconds_count"] ?? 0) >= 1)
            #expect(values.keys.contains { $0.hasPrefix("openjam_store_commit_seconds_bucket") })
            #expect((values["openjam_store_batch_writes_count"] ?? 0) >= 1)
            #expect(values["openjam_realtime_connections"] == 2)
            #expect((values["openjam_live_sessions"] ?? 0) >= 1)
            #expect(values["openjam_sync_reports_total"] == 1)
            #expect((values["openjam_frames_delivered_total"] ?? 0) > 0)
            await party.close()
        }
    }

    @Test func sessionsEndedRestLimitsAndSubMillisecondCommitsShowAsTheyAre() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await ServerProcess.with(dataDirectory: folder) { process in
            let api = process.server.api
            let host = try await api.guest("Host")
            let id = try await api.create(host.token).session.id
            // REST adds draw from the member's add budget (10 at once, then one every 2 s): of
            // 16 sent together, some are refused, however slow the machine.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<16 { group.addTask { try await api.add(host.token, id, testTrack(n)).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let refused = statuses.filter { $0 == 429 }.count
            #expect(refused >= 1 && refused + statuses.filter { $0 == 201 }.count == 16, "\(statuses)")
            #expect(try await api.request("DELETE", "/api/v1/sessions/\(id)", token: host.token).status == 204)
            let values = Self.samples(try await api.request("GET", "/metrics").text)
            #expect(values["openjam_live_sessions"] == 0, "the session ended")
            #expect(values[#"openjam_command_errors_total{code="rateLimited"}"#] == Double(refused))
            // Buckets below a millisecond, where commits on a local disk fall.
            let buckets = values.filter { $0.key.hasPrefix("openjam_store_commit_seconds_bucket") }
            let fine = buckets.filter { key, _ in
                key.firstMatch(of: /le="([0-9.e-]+)"/).flatMap { Double($0.1) }.map { $0 <= 0.001 } ?? false
            }
            #expect(fine.count >= 4, "\(buckets.keys.sorted())")
            let sizes = values.keys.filter { $0.hasPrefix("openjam_store_batch_writes_bucket") }
            #expect(sizes.contains { $0.contains(#"le="2.0""#) }, "\(sizes.sorted())")
        }
    }

    static let dashboard = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../deploy/grafana/openjam.json").standardizedFileURL

    /// The OpenJam series a Grafana dashboard's queries read.
    static func chartedSeries(_ dashboard: Data) throws -> Set<String> {
        struct Dashboard: Decodable {
            struct Panel: Decodable {
                struct Target: Decodable { let expr: String }
                let title: String
                let targets: [Target]
            }
            let panels: [Panel]
        }
        let panels = try JSONDecoder().decode(Dashboard.self, from: dashboard).panels
        let pattern = /openjam_[a-z_]+/
        return Set(panels.flatMap(\.targets).flatMap { $0.expr.matches(of: pattern).map { String($0.output) } })
    }

    @Test func everySeriesTheGrafanaDashboardChartsIsExported() async throws {
        let charted = try Self.chartedSeries(Data(contentsOf: Self.dashboard))
        #expect(charted.count >= 10, "\(charted.sorted())")
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await ServerProcess.with(dataDirectory: folder) { process in
            let server = process.server
            let (party, _) = try await Party.withARefusedVote(server)
            let text = try await server.api.request("GET", "/metrics").text
            let exported = Set(Self.samples(text).keys.map { String($0.prefix { $0 != "{" }) })
            let missing = charted.subtracting(exported)
            #expect(missing.isEmpty, "the dashboard charts series /metrics does not export: \(missing.sorted())")
            await party.close()
        }
    }
}

/// `/metrics` of nodes sharing one database.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct ClusterMetricsTests {
    @Test func everyNodeCountsTheSessionsAnyNodeCreated() async throws {
        let location = try await TestPostgres.freshDatabase()
        let url = try location.url
        let nodes = [
            try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", url]),
            try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", url]),
        ]
        do {
            // Both made on the first node, after the second started: the second knows of neither.
            let host = try await nodes[0].server.api.guest("Host")
            for _ in 0..<2 { _ = try await nodes[0].server.api.create(host.token) }
            for node in nodes {
                let values = MetricsScrapeTests.samples(try await node.server.api.request("GET", "/metrics").text)
                #expect(values["openjam_live_sessions"] == 2, "node on port \(node.port)")
            }
        } catch {
            for node in nodes { _ = try? await node.terminate() }
            throw error
        }
        for node in nodes { try await node.terminate() }
    }
}
