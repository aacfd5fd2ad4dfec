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
}
