import Foundation
import Testing

@Suite("PirateRadio: ping")
struct PingTests {
    @Test("ping {clientSendTime} is answered to the sender only with pong {clientSendTime, serverTime ≈ now}")
    func pingIsAnsweredWithPong() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let member = party.members[0]
            let sent = nowMs()
            member.socket.send("ping", ["clientSendTime": sent])
            let pong = try await member.socket.next("pong")
            let received = nowMs()
            #expect(jsonInt(pong.data["clientSendTime"]) == sent, "clientSendTime must be echoed: \(pong.text)")
            let serverTime = try #require(jsonNumber(pong.data["serverTime"]), "no numeric serverTime: \(pong.text)")
            #expect(serverTime >= Double(sent - 2_000) && serverTime <= Double(received + 2_000),
                    "serverTime \(serverTime) should be between \(sent) and \(received)")

            try await party.marker(1)
            #expect(await party.dj.socket.frames("pong").isEmpty, "the pong goes to the sender only")
        }
    }
}
