import Foundation
import Testing

@Suite("PirateRadio: driftReport")
struct DriftReportTests {
    @Test("A driftReport goes to the DJ only, with the sender's id added as fromUserId")
    func driftReportIsRelayedToTheDJOnly() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1", "m2"])
            let report: JSONObject = ["driftMs": 42, "epoch": 0, "deviceName": "iPhone"]
            party.members[0].socket.send("driftReport", report)

            let relayed = try await party.dj.socket.next("driftReport")
            #expect(relayed.data.string("fromUserId") == "m1", "\(relayed.text)")
            var withoutUser = relayed.data
            withoutUser["fromUserId"] = nil
            #expect(jsonEqual(withoutUser, report), "the report is relayed as sent plus fromUserId: \(relayed.text)")

            try await party.marker(1)
            for member in party.members {
                let seen = await member.socket.summary()
                #expect(await member.socket.frames("driftReport").isEmpty, "\(member.id) got a driftReport: \(seen)")
            }
        }
    }

    @Test("The DJ's own driftReport comes back to the DJ, as its server writes every report to the DJ's socket")
    func theDJsOwnReportComesBackToTheDJ() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let report: JSONObject = ["driftMs": -3, "epoch": 0]
            party.dj.socket.send("driftReport", report)
            let relayed = try await party.dj.socket.next("driftReport")
            #expect(relayed.data.string("fromUserId") == "dj", "\(relayed.text)")
            try await party.marker(1)
            #expect(await party.members[0].socket.frames("driftReport").isEmpty)
        }
    }

    @Test("A message up to its server's 512,000 bytes is taken: a 100 KB driftReport reaches the DJ and the sender stays")
    func aLargeMessageUpToItsServersLimitIsTaken() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let padding = String(repeating: "x", count: 100_000)
            party.members[0].socket.send("driftReport", ["driftMs": 7, "log": padding])
            let relayed = try await party.dj.socket.next("driftReport")
            #expect(relayed.data.string("log")?.count == 100_000)
            try await party.members[0].socket.roundTrip()
            #expect(await party.members[0].socket.isClosed == false)
        }
    }
}
