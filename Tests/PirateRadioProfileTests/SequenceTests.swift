import Foundation
import Testing

@Suite("PirateRadio: epoch and seq")
struct SequenceTests {
    @Test("seq counts broadcast frames per epoch, starts again after an epoch change, and the snapshot's sequence is the last seq")
    func seqRestartsWithEachEpoch() async throws {
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
            let newSeqs = newEpoch.compactMap(\.seq)
            #expect(newSeqs.count == 3, "\(newEpoch)")
            let first = try #require(newSeqs.first)
            #expect(first <= 1, "seq starts again at 0 in the new epoch, got \(first) after \(oldSeqs)")
            #expect(first < (oldSeqs.last ?? 0), "seq must restart: \(oldSeqs) then \(newSeqs)")
            #expect(zip(newSeqs, newSeqs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "consecutive: \(newSeqs)")

            let after = try await party.snapshot()
            #expect(after.int("epoch") == 1)
            #expect(after.int("sequence") == newSeqs.last, "sequence \(String(describing: after["sequence"])) vs last seq \(newSeqs)")
        }
    }
}
