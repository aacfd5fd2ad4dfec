import Testing
import JamCore
import JamProtocol

/// Which commands may succeed without events: only for those does the server keep a copy of
/// the state to tell whether a turn changed anything.
struct EventlessTurnTests {
    @Test func aVoteRepeatsOnlyWhenTheMembersVoteIsThatValueAlready() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        #expect(jam.state.voteRepeats(on: itemID(2), value: 0, by: bob))
        #expect(!jam.state.voteRepeats(on: itemID(2), value: 1, by: bob))
        try jam.vote(2, 1, by: bob)
        #expect(jam.state.voteRepeats(on: itemID(2), value: 1, by: bob))
        #expect(!jam.state.voteRepeats(on: itemID(2), value: -1, by: bob))
        #expect(jam.state.voteRepeats(on: itemID(2), value: 0, by: carol))
        // Not queued: the vote is refused, never a repeat.
        #expect(!jam.state.voteRepeats(on: itemID(1), value: 0, by: bob))
        #expect(!jam.state.voteRepeats(on: itemID(99), value: 0, by: bob))
    }

    @Test func aRepeatedVoteAndARetriedAddEndWithoutEventsAndAreNamedSo() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.vote(2, 1, by: bob)
        let vote = Command.vote(itemId: itemID(2), value: 1)
        #expect(jam.state.mayEndWithoutEvents(vote, by: bob))
        #expect(try jam.apply(vote, by: bob).events.isEmpty)
        let add = Command.add(track: track(2), nonce: "nonce-2", itemId: itemID(2))
        #expect(jam.state.mayEndWithoutEvents(add, by: alice))
        #expect(try jam.apply(add, by: alice).events.isEmpty)
    }

    /// Seeds 1...24, 400 random steps each, valid and invalid commands: a command not named as
    /// possibly eventless either shows events or is refused.
    @Test(arguments: 1...24)
    func aCommandNotNamedEventlessShowsEventsOrIsRefused(_ seed: Int) throws {
        var sim = try Simulation(seed: UInt64(seed) &* 104_729)
        var checked = 0
        for step in 0..<400 {
            guard let (command, user) = sim.randomStep() else {
                _ = sim.moveClock()
                continue
            }
            let eventless = sim.jam.state.mayEndWithoutEvents(command, by: user)
            let outcome: Outcome
            do {
                outcome = try sim.jam.apply(command, by: user)
            } catch {
                continue  // refused: EventSequenceTests checks that nothing changed
            }
            if !eventless {
                checked += 1
                #expect(!outcome.events.isEmpty, "seed \(seed) step \(step): \(command) by \(user) succeeded without events")
            }
        }
        #expect(checked > 50)
    }
}
