import Foundation
import Testing

@Suite("PirateRadio: epoch and seq")
struct SequenceTests {
    @Test("seq counts every broadcast frame; playPrepare raises the epoch and seq goes on; the snapshot shows both")
    func playPrepareRaisesTheEpochAndSeqGoesOn() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let member = party.members[0].socket
            let dj = party.dj.socket

            var oldEpoch: [Frame] = []
            for n in 1...3 {
                _ = try await dj.addAndWait(prTrack(n))
                oldEpoch.append(try await member.next("queueUpdate"))
            }
            let oldSeqs = oldEpoch.compactMap(\.seq)
            #expect(oldSeqs.count == 3, "every frame carries a seq: \(oldEpoch)")
            #expect(oldEpoch.allSatisfy { $0.epoch == 0 }, "\(oldEpoch)")
            #expect(zip(oldSeqs, oldSeqs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "consecutive: \(oldSeqs)")
            #expect((await dj.frames("queueUpdate")).last?.seq == oldSeqs.last, "the same broadcast carries the same seq for everybody")
            let before = try await party.snapshot()
            #expect(before.int("epoch") == 0)
            #expect(before.int("sequence") == oldSeqs.last, "sequence \(String(describing: before["sequence"])) vs last seq \(oldSeqs)")

            dj.send("playPrepare", ["trackId": "spotify:track:9", "track": prTrack(9)])
            let prepare = try await member.next("playPrepare")
            dj.send("playCommit", ["positionMs": 0, "ntpTimestamp": nowMs()])
            let commit = try await member.next("playCommit")
            _ = try await dj.addAndWait(prTrack(4))
            let update = try await member.next("queueUpdate")

            let newEpoch = [prepare, commit, update]
            #expect(newEpoch.allSatisfy { $0.epoch == 1 }, "\(newEpoch)")
            // As in PirateRadio's server: playPrepare raises the epoch, and seq goes on counting.
            let last = try #require(oldSeqs.last)
            #expect(newEpoch.compactMap(\.seq) == [last + 1, last + 2, last + 3], "\(oldSeqs) then \(newEpoch)")

            let after = try await party.snapshot()
            #expect(after.int("epoch") == 1)
            #expect(after.int("sequence") == last + 3, "\(after)")
        }
    }

    @Test("Every socket that opens counts: its stateSync has the current seq and memberJoined the next, a return included")
    func everySocketThatOpensCounts() async throws {
        try await PirateServer.with { server in
            let djUser = try await server.http.signIn("dj", displayName: "Ann")
            let m1User = try await server.http.signIn("m1", displayName: "Bo")
            let session = try await server.http.createSession(djUser)
            let dj = PirateSocket(server, token: djUser.token, session: session.id, label: "dj")
            let djSync = try await dj.next("stateSync")
            #expect(djSync.seq == 0 && djSync.data.int("sequence") == 0, "\(djSync.text)")

            let m1 = PirateSocket(server, token: m1User.token, session: session.id, label: "m1")
            let m1Sync = try await m1.next("stateSync")
            // The DJ's own socket counted one.
            #expect(m1Sync.seq == 1 && m1Sync.data.int("sequence") == 1, "\(m1Sync.text)")
            let joined = try await dj.next("memberJoined")
            #expect(joined.seq == 2 && joined.data.string("userId") == "m1", "\(joined.text)")
            let update = try await dj.addAndWait(prTrack(1))
            #expect(update.seq == 3, "\(update.text)")

            let again = PirateSocket(server, token: m1User.token, session: session.id, label: "m1 again")
            let againSync = try await again.next("stateSync")
            #expect(againSync.seq == 3, "\(againSync.text)")
            let rejoined = try await dj.next("memberJoined")
            #expect(rejoined.seq == 4 && rejoined.data.string("userId") == "m1" && rejoined.data.string("displayName") == "Bo", "\(rejoined.text)")
        }
    }

    @Test("A skip starts a new epoch whose stateSync is seq 0, and the next frame is seq 1")
    func skipStartsAnEpochAtSeqZero() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let member = party.members[0].socket
            let dj = party.dj.socket
            for n in 1...3 { _ = try await dj.addAndWait(prTrack(n)) }
            let counted = try await member.next("queueUpdate") { $0.data.objects("queue")?.count == 3 }
            #expect((counted.seq ?? 0) >= 3, "\(counted)")

            dj.send("skip")
            let sync = try await member.next("stateSync", "after the skip")
            #expect(sync.epoch == 1, "\(sync.text)")
            #expect(sync.seq == 0, "\(sync.text)")
            #expect(sync.data.int("epoch") == 1, "\(sync.text)")
            #expect(sync.data.int("sequence") == 0, "\(sync.text)")

            _ = try await dj.addAndWait(prTrack(4))
            let update = try await member.next("queueUpdate") { $0.epoch == 1 }
            #expect(update.seq == 1, "\(update.text)")

            // Each skip that starts a track starts another epoch.
            dj.send("skip")
            let next = try await member.next("stateSync", "after the second skip")
            #expect(next.epoch == 2 && next.seq == 0, "\(next.text)")
        }
    }

    @Test("A new DJ's stateSync has no epoch, seq or timestamp, shows the epoch raised, and later frames carry it")
    func newDJRaisesTheEpochWithABareStateSync() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1", "m2"])
            let (m1, m2) = (party.members[0].socket, party.members[1].socket)
            _ = try await party.dj.socket.addAndWait(prTrack(1))
            let update = try await m1.next("queueUpdate")
            let (epoch, seq) = (try #require(update.epoch), try #require(update.seq))

            await party.dj.socket.close()
            let left = try await m1.next("memberLeft")
            #expect(left.epoch == epoch && left.seq == seq + 1, "\(update.text) then \(left.text)")
            let sync = try await m1.next("stateSync", "naming the new DJ")
            #expect(sync.data.string("djUserId") == "m1", "\(sync.text)")
            #expect(sync.object["epoch"] == nil && sync.object["seq"] == nil && sync.object["timestamp"] == nil, "\(sync.text)")
            #expect(sync.data.int("epoch") == epoch + 1, "\(sync.text)")
            #expect(sync.data.int("sequence") == seq + 1, "\(sync.text)")
            _ = try await m2.next("stateSync", "naming the new DJ")

            m2.send("addToQueue", ["track": prTrack(2), "nonce": "n-2"])
            let next = try await m1.next("queueUpdate") { $0.data.objects("queue")?.count == 2 }
            #expect(next.epoch == epoch + 1 && next.seq == seq + 2, "\(next.text)")
        }
    }

    @Test("After a kill -9 and restart the epoch does not go back, though a new DJ raised it beyond the session's own")
    func theEpochDoesNotGoBackAfterARestart() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            _ = try await party.dj.socket.addAndWait(prTrack(1))
            await party.dj.socket.close()
            let sync = try await party.members[0].socket.next("stateSync", "naming m1") { $0.data.string("djUserId") == "m1" }
            let raised = try #require(sync.data.int("epoch"), "\(sync.text)")
            #expect(raised == 1, "\(sync.text)")
            // Stored: the leave's memberLeft went out before the stateSync. After the restart m1
            // leaves too (no socket), and no new DJ raises the epoch again.
            try await server.afterKill { restarted in
                let snapshot = try await restarted.http.snapshot(party.members[0].user, session: party.id)
                let epoch = try #require(snapshot.int("epoch"), "\(snapshot)")
                #expect(epoch >= raised, "epoch \(epoch) after the restart, \(raised) before")
                let back = try await restarted.connect(party.members[0].user, to: party.id)
                let update = try await back.socket.addAndWait(prTrack(2))
                #expect((update.epoch ?? -1) >= raised, "\(update.text)")
            }
        }
    }

    @Test("pong is only type and data; a relayed driftReport has a timestamp but no epoch or seq")
    func directFramesCarryWhatItsServerSends() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let member = party.members[0].socket
            member.send("ping", ["clientSendTime": 12])
            let pong = try await member.next("pong")
            #expect(Set(pong.object.keys) == ["type", "data"], "\(pong.text)")
            // Also a clientSendTime that is not a number, which is echoed as sent.
            member.send("ping", ["clientSendTime": "soon"])
            let odd = try await member.next("pong") { $0.data.string("clientSendTime") == "soon" }
            #expect(Set(odd.object.keys) == ["type", "data"], "\(odd.text)")

            member.send("driftReport", ["driftMs": 3])
            let report = try await party.dj.socket.next("driftReport")
            #expect(Set(report.object.keys) == ["type", "data", "timestamp"], "\(report.text)")
        }
    }
}
