import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// What `jam serve --log-level info` writes about requests and refused commands.
@Suite struct StructuredLogTests {
    @Test func everyRequestAndEveryRefusedCommandGetsOneLineNamingItsMemberAndSession() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = try await ServerProcess(dataDirectory: folder, extraArguments: ["--log-level", "info"])
        let server = process.server
        let (party, code) = try await Party.withARefusedVote(server)
        await party.close()
        try await process.terminate()

        let logs = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).filter { $0.lastPathComponent.hasPrefix("serve-") }
        let text = try logs.map { try String(contentsOf: $0, encoding: .utf8) }.joined()
        let requests = text.split(separator: "\n").filter { $0.contains(" request") && $0.contains("http.method=") }
        let add = try #require(requests.first { $0.contains("http.path=/api/v1/sessions/\(party.id)/queue") })
        #expect(add.contains("http.method=POST"))
        #expect(add.contains("http.status=201") || add.contains("http.status=200"))
        #expect(add.contains("member.id=\(party.host.id)"))
        #expect(add.contains("session.id=\(party.id)"))
        #expect(add.contains("duration.ms="))
        let refused = text.split(separator: "\n").filter { $0.contains("command refused") }
        #expect(refused.count == 1)
        let line = try #require(refused.first)
        #expect(line.contains("member.id=\(party.guests[0].id)"))
        #expect(line.contains("session.id=\(party.id)"))
        #expect(line.contains("error.code=\(code.rawValue)"))
    }
}
