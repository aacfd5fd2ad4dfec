import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// Frames sent without an id (`post`) against a scripted socket: one the server would refuse
/// for its values is not sent, and the client goes on.
@Suite(.timeLimit(.minutes(1))) struct PostedFrameTests {
    @Test("a syncReport with a figure that is not a number is not sent, and the client goes on")
    func aReportThatIsNotANumberIsNotSent() async throws {
        try await ConnectionWatchTests.connected { socket, client, _ in
            let report = SyncReport(epoch: 1, offsetMs: 0, errorMs: 1, driftMs: .nan, deviceId: "phone-1")
            #expect(await client.post(.syncReport(report)) == false)
            #expect(await client.post(.syncReport(SyncReport(epoch: 1, offsetMs: 0, errorMs: 1, driftMs: 2, deviceId: "phone-1"))))
            try await eventually("the valid report is sent") {
                try await socket.commands().contains { if case .syncReport = $0 { true } else { false } }
            }
            let sent = try await socket.commands().compactMap { command -> SyncReport? in
                if case .syncReport(let report) = command { report } else { nil }
            }
            #expect(sent.map(\.driftMs) == [2], "only the valid report went out")
            #expect(await client.phase == .connected)
        }
    }
}
