import Foundation
import Testing
import JamCore
import JamProtocol

/// The session log stores inputs, not states: replaying the stored inputs onto the stored
/// snapshot must rebuild the very same state and events, or a restart would change a session.
struct SessionInputReplayTests {
    /// A seeded run of the simulation, recording every accepted input as the server logs it.
    struct RecordedRun {
        var initial: SessionState
        var final: SessionState
        var inputs: [TimedInput] = []
        var events: [ServerEnvelope] = []
        /// The state after each input, for snapshots taken mid-run.
        var states: [SessionState] = []
    }

    static func record(seed: UInt64, steps: Int) throws -> RecordedRun {
        var simulation = try Simulation(seed: seed)
        var run = RecordedRun(initial: simulation.jam.state, final: simulation.jam.state)
        func take(_ timed: TimedInput, _ state: inout SessionState) {
            do {
                let outcome = try state.apply(timed)
                run.inputs.append(timed)
                run.events += outcome.events
                run.states.append(state)
            } catch {
                // Refused: nothing changed and nothing is logged.
            }
        }
        var state = simulation.jam.state
        for step in 0..<steps {
            if let (command, user) = simulation.randomStep() {
                take(TimedInput(at: simulation.jam.now, .command(command, by: user)), &state)
            } else {
                _ = simulation.moveClock()
                take(TimedInput(at: simulation.jam.now, .advance), &state)
            }
            if step % 37 == 0 {
                take(TimedInput(at: simulation.jam.now, .supplyFallback([track(10_000 + step, durationMs: 30_000)])), &state)
            }
            if step % 53 == 0 {
                take(TimedInput(at: simulation.jam.now, .restart(Timing(minLeadMs: 400))), &state)
            }
            if step % 71 == 0 {
                take(TimedInput(at: simulation.jam.now, .keepFallback([])), &state)
            }
            // The simulation's own copy follows the logged state so its next choices fit it.
            simulation.jam.state = state
        }
        run.final = state
        return run
    }

    /// Inputs as they go to the store and come back.
    static func stored(_ inputs: [TimedInput]) throws -> [TimedInput] {
        let bytes = try JSONEncoder().encode(inputs)
        return try JSONDecoder().decode([TimedInput].self, from: bytes)
    }

    @Test(arguments: 1...12)
    func replayingTheStoredInputsRebuildsTheStateAndItsEvents(_ seed: Int) throws {
        let run = try Self.record(seed: UInt64(seed) &* 104_729, steps: 400)
        #expect(run.inputs.count > 100, "the run accepted too few inputs to mean anything")
        var replayed = run.initial
        var events: [ServerEnvelope] = []
        for input in try Self.stored(run.inputs) {
            events += try replayed.apply(input).events
        }
        #expect(replayed == run.final)
        #expect(events == run.events)
    }

    @Test(arguments: 1...6)
    func aSnapshotPlusTheTailRebuildsTheSameState(_ seed: Int) throws {
        let run = try Self.record(seed: UInt64(seed) &* 7_907, steps: 300)
        var rng = SeededRandom(seed: UInt64(seed))
        for _ in 0..<5 {
            let cut = rng.int(0...(run.inputs.count - 1))
            // The snapshot goes through the store's encoding too.
            var state = try JSONDecoder().decode(SessionState.self, from: JSONEncoder().encode(run.states[cut]))
            for input in try Self.stored(Array(run.inputs[(cut + 1)...])) {
                _ = try state.apply(input)
            }
            #expect(state == run.final, "snapshot after input \(cut)")
        }
    }

    @Test func restartDisconnectsEveryoneAndTakesTheNewTiming() throws {
        var jam = try Jam(members: [alice, bob])
        #expect(jam.state.connectedCount == 3)
        let outcome = try jam.state.apply(TimedInput(at: jam.now, .restart(Timing(minLeadMs: 900))))
        #expect(outcome.events.isEmpty)
        #expect(jam.state.connectedCount == 0)
        #expect(jam.state.timing.minLeadMs == 900)
    }

    @Test func keepFallbackDropsReservedTracksThatLeftTheLibrary() throws {
        var jam = try Jam(settings: SessionSettings(fallback: true))
        _ = try jam.state.apply(TimedInput(at: jam.now, .supplyFallback([track(1), track(2)])))
        _ = try jam.state.apply(TimedInput(at: jam.now, .keepFallback(["track-2", "track-9"])))
        #expect(jam.state.fallbackReserve?.tracks.map(\.id) == ["track-2"])
    }

    @Test func aRefusedCommandThrowsAndChangesNothing() throws {
        var jam = try Jam()
        let before = jam.state
        #expect(throws: JamError.self) {
            try jam.state.apply(TimedInput(at: jam.now, .command(.skip, by: alice)))
        }
        #expect(jam.state == before)
    }

    /// The stored form of an input is the log's format: this pins it, so a renamed case or
    /// label (which old logs could no longer be read with) fails here first.
    @Test func theStoredFormOfInputsIsStable() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let inputs: [TimedInput] = [
            TimedInput(at: 5, .command(.vote(itemId: itemID(1), value: -1), by: alice)),
            TimedInput(at: 6, .command(.djTimeline(.pause(positionMs: 7, at: 8)), by: host)),
            TimedInput(at: 9, .advance),
        ]
        let text = String(decoding: try encoder.encode(inputs), as: UTF8.self)
        #expect(text == #"[{"at":5,"input":{"command":{"_0":{"vote":{"itemId":"00000000-0000-0000-0001-000000000001","value":-1}},"by":"00000000-0000-0000-0000-000000000002"}}},{"at":6,"input":{"command":{"_0":{"djTimeline":{"_0":{"pause":{"at":8,"positionMs":7}}}},"by":"00000000-0000-0000-0000-000000000001"}}},{"at":9,"input":{"advance":{}}}]"#)
    }
}
