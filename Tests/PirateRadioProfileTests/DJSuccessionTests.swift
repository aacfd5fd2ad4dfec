import Foundation
import Testing

@Suite("PirateRadio: DJ succession")
struct DJSuccessionTests {
    @Test("When the DJ leaves, the longest-present member becomes DJ, but the creator gets it back when present")
    func djPassesToCreatorElseLongestPresent() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1", "m2"])
            let (m1, m2) = (party.members[0], party.members[1])

            // The creator (the DJ) leaves: m1 has been there longest.
            await party.dj.socket.close()
            for member in [m1, m2] {
                let left = try await member.socket.next("memberLeft")
                #expect(left.data.string("userId") == "dj", "\(member.id): \(left.text)")
                let sync = try await member.socket.next("stateSync", "naming the new DJ")
                #expect(sync.data.string("djUserId") == "m1", "\(member.id): \(sync.text)")
                #expect(!(sync.data.objects("members") ?? []).contains { $0.string("userId") == "dj" }, "\(sync.text)")
            }
            #expect(try await party.http.snapshot(m1.user, session: party.id).string("djUserId") == "m1")

            // The creator comes back, then the current DJ leaves: the creator is DJ again although m2 came first.
            let creator = try await server.connect(party.dj.user, to: party.id)
            try await m2.socket.next("memberJoined") { $0.data.string("userId") == "dj" }
            try await m1.socket.next("memberJoined") { $0.data.string("userId") == "dj" }
            await m1.socket.close()
            for person in [creator, m2] {
                let left = try await person.socket.next("memberLeft")
                #expect(left.data.string("userId") == "m1", "\(person.id): \(left.text)")
                let sync = try await person.socket.next("stateSync", "naming the creator")
                #expect(sync.data.string("djUserId") == "dj", "\(person.id): \(sync.text)")
            }
            let snapshot = try await party.http.snapshot(m2.user, session: party.id)
            #expect(snapshot.string("djUserId") == "dj")
            #expect(snapshot.string("creatorId") == "dj")

            // The new DJ's commands work.
            creator.socket.send("playPrepare", ["trackId": "spotify:track:1", "track": prTrack(1)])
            try await m2.socket.next("playPrepare")
        }
    }

    @Test("A member who is not the DJ leaving sends memberLeft and keeps the DJ")
    func memberLeavingKeepsTheDJ() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1", "m2"])
            await party.members[1].socket.close()
            for person in [party.dj, party.members[0]] {
                let left = try await person.socket.next("memberLeft")
                #expect(left.data.string("userId") == "m2", "\(person.id): \(left.text)")
            }
            let snapshot = try await party.snapshot()
            #expect(snapshot.string("djUserId") == "dj")
            #expect(!(snapshot.objects("members") ?? []).contains { $0.string("userId") == "m2" }, "\(snapshot)")
        }
    }

    @Test("After a kill -9 and restart the DJ of a station with members is still its DJ, and controls it when back")
    func theDJStaysDJAcrossARestart() async throws {
        try await PirateServer.with { server in
            // Not the creator: succession made m1 DJ, with the creator gone and m2 still there.
            let party = try await Party.start(server, members: ["m1", "m2"])
            await party.dj.socket.close()
            try await party.members[1].socket.next("stateSync", "naming m1") { $0.data.string("djUserId") == "m1" }
            _ = try await party.members[0].socket.addAndWait(prTrack(1))
            try await server.afterKill { restarted in
                // Every socket went with the server; everybody leaves, the DJ last, so the
                // station waits for its DJ rather than for whoever happened to leave last.
                let snapshot = try await restarted.http.snapshot(party.members[0].user, session: party.id)
                #expect(snapshot.string("djUserId") == "m1", "\(snapshot)")
                let dj = try await restarted.connect(party.members[0].user, to: party.id)
                let listener = try await restarted.connect(party.members[1].user, to: party.id)
                dj.socket.send("playPrepare", ["trackId": "spotify:track:2", "track": prTrack(2)])
                try await listener.socket.next("playPrepare")
            }
        }
    }
}
