import Foundation
import Testing
import JamCore
import JamProtocol

struct EventSequenceTests {
    /// Seeds 1...24, 400 steps each: seq is contiguous, epoch counts starts, failures change nothing.
    @Test(arguments: 1...24)
    func randomSessionsKeepTheirCounters(_ seed: Int) throws {
        var sim = try Simulation(seed: UInt64(seed))
        var failures = 0
        var successes = 0
        for step in 0..<400 {
            let before = sim.jam.state
            let logCount = sim.jam.log.count
            let events: [ServerEnvelope]
            if let (command, user) = sim.randomStep() {
                do {
                    events = try sim.jam.apply(command, by: user).events
                    successes += 1
                } catch {
                    failures += 1
                    // A command that throws leaves the whole state exactly as it was.
                    #expect(sim.jam.state == before, "seed \(seed) step \(step): \(command) by \(user) failed with \(error) but changed the state")
                    #expect(sim.jam.log.count == logCount)
                    continue
                }
            } else {
                events = sim.moveClock()
            }
            // seq: one more per event, no gaps, no resets.
            #expect(events.map(\.seq) == Array(stride(from: before.seq + 1, through: sim.jam.state.seq, by: 1)),
                    "seed \(seed) step \(step)")
            // epoch: rises by one for each item that became current, never otherwise.
            let starts = events.filter { envelope in envelope.event.playPrepare?.epoch == envelope.epoch }
            #expect(starts.map(\.epoch) == Array(stride(from: before.epoch + 1, through: sim.jam.state.epoch, by: 1)),
                    "seed \(seed) step \(step)")
            #expect(events.map(\.epoch) == events.map(\.epoch).sorted())
            #expect(events.allSatisfy { $0.epoch >= before.epoch && $0.epoch <= sim.jam.state.epoch })
            if let now = sim.jam.state.current?.item.id, now != before.current?.item.id {
                #expect(sim.jam.state.epoch > before.epoch, "a new current item brings a new epoch")
            }
            if sim.jam.state.current?.item.id == before.current?.item.id && starts.isEmpty {
                #expect(sim.jam.state.epoch == before.epoch)
            }
            checkStructure(sim.jam.state)
            if step % 50 == 0 {
                let decoded = try JSONDecoder().decode(SessionState.self, from: JSONEncoder().encode(sim.jam.state))
                #expect(decoded == sim.jam.state)
            }
            if sim.jam.state.hasEnded { break }
        }
        // Over the whole run, seq numbers are exactly 1...N.
        #expect(sim.jam.log.map(\.seq) == Array(stride(from: 1, through: sim.jam.state.seq, by: 1)))
        #expect(sim.jam.state.seq == Int64(sim.jam.log.count))
        // The run exercised both paths.
        #expect(failures > 20)
        #expect(successes > 50)
    }

    @Test func seqContinuesAcrossCommandsAndClockMoves() throws {
        var jam = try Jam()
        try jam.startPlaying(1, durationMs: 20_000)
        try jam.add(2, by: alice, durationMs: 20_000)
        try jam.vote(2, 1, by: bob)
        jam.advance(to: jam.now + 100_000)
        try jam.add(3, by: bob)
        try jam.apply(.skip, by: host)
        #expect(jam.log.count > 15)
        #expect(jam.log.map(\.seq) == Array(1...Int64(jam.log.count)))
        #expect(jam.state.seq == Int64(jam.log.count))
    }

    @Test func outcomeWithoutEventsDoesNotConsumeSeq() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let seq = jam.state.seq
        try jam.apply(.join(displayName: "Alice"), by: alice)
        try jam.apply(.syncReport(SyncReport(epoch: 1, offsetMs: 0, errorMs: 2, driftMs: 0)), by: alice)
        try jam.apply(.ready(epoch: 7), by: alice)
        #expect(jam.state.seq == seq)
        try jam.add(2, by: alice)
        #expect(jam.log.last?.seq == seq + 1)
    }
}

struct AllOrNothingTests {
    @Test func failingStepUndoesTheWholeBatch() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        jam.reject(.all([
            .add(track: track(2), nonce: "n2", itemId: itemID(2)),
            .vote(itemId: itemID(2), value: 1),
            .vote(itemId: itemID(77), value: 1),
        ]), by: alice, .notFound)
        jam.reject(.all([.pause, .seek(positionMs: 1_000), .skip, .setJoinCode("X")]), by: bob, .forbidden)
        jam.reject(.all([.join(displayName: "Carol"), .add(track: track(1), nonce: "c", itemId: itemID(3))]), by: carol, .duplicate)
        #expect(jam.state.member(carol) == nil)
    }

    @Test func successfulBatchAppliesEveryStepInOrder() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        let seq = jam.state.seq
        let outcome = try jam.apply(.all([
            .add(track: track(2), nonce: "n2", itemId: itemID(2)),
            .add(track: track(3), nonce: "n3", itemId: itemID(3)),
            .vote(itemId: itemID(3), value: 1),
        ]), by: alice)
        #expect(outcome.events.types == [.queueItemAdded, .queueItemAdded, .votesUpdate])
        #expect(outcome.events.map(\.seq) == Array(seq + 1...seq + 3))
        #expect(outcome.itemId == itemID(3))
        #expect(outcome.score == 1)
        #expect(jam.order == items(3, 2))
    }

    @Test func batchCanJoinAndActAsTheNewMember() throws {
        var jam = try Jam()
        let outcome = try jam.apply(.all([.join(displayName: "Carol"), .connect, .add(track: track(1), nonce: "c", itemId: itemID(1))]), by: carol)
        #expect(outcome.events.types.first == .memberJoined)
        #expect(jam.state.current?.item.addedBy == carol)
        #expect(jam.state.member(carol)?.connected == true)
    }

    @Test func emptyBatchDoesNothing() throws {
        var jam = try Jam()
        let before = jam.state
        #expect(try jam.apply(.all([]), by: alice).events.isEmpty)
        #expect(jam.state == before)
    }

    @Test func nestedBatchesAreAtomicToo() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        jam.reject(.all([.all([.add(track: track(2), nonce: "n2", itemId: itemID(2))]), .all([.skip])]), by: alice, .forbidden)
        try jam.apply(.all([.all([.add(track: track(2), nonce: "n2", itemId: itemID(2))]), .all([.skip])]), by: host)
        #expect(jam.state.current?.item.id == itemID(2))
    }
}
