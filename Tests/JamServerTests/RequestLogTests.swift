import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// The request log of `jam serve` as an operator reads it.
@Suite struct RequestLogTests {
    @Test func aRefusedFloodIsLogged429AndAnInviteLinksCodeIsNot() async throws {
        let server = try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--log-level", "info"])
        do {
            let api = server.server.api
            _ = try await api.request("GET", "/j/QX7KPW")
            // The same route by another spelling.
            #expect(try await api.request("GET", "//j/QX7KPW").status == 200)
            let guest = try await api.guest("Ann")
            var status = 0
            for _ in 0..<40 where status != 429 {
                status = try await api.send("POST", "/api/v1/sessions/join", token: guest.token, json: JoinSessionRequest(code: "AAAAAA")).status
            }
            #expect(status == 429)
            try await server.terminate()
        } catch {
            _ = try? await server.terminate()
            throw error
        }
        let log = try String(contentsOf: server.logFile, encoding: .utf8)
        let lines = log.split(separator: "\n")
        // Join-code guessing shows as what it got, not as a failure without a status.
        #expect(lines.contains { $0.contains("http.path=/api/v1/sessions/join") && $0.contains("http.status=429") && $0.contains("error.code=rateLimited") }, "\(log)")
        #expect(!lines.contains { $0.contains("http.status=error") }, "\(log)")
        // The code of an invite link admits whoever reads it.
        #expect(!log.contains("QX7KPW"), "\(log)")
        #expect(lines.contains { $0.contains("http.path=/j/:code") }, "\(log)")
    }
}
