import JamProtocol

/// Everything that changes a session, in the form the session log keeps it.
///
/// A session's state is its first snapshot plus its inputs in order: applying the same
/// inputs at the same instants to the same state gives the same state and the same events
/// (`SessionState.apply(_:)`), which is how the server recovers a session after a restart.
/// The encoded form is stored: renaming a case or a label of this type, of `Command` or of
/// `DJTimeline` needs a store migration.
public enum SessionInput: Codable, Hashable, Sendable {
    /// A member's command.
    case command(Command, by: UserID)
    /// Time passed: commit deadlines, gapless hand-overs, auto-advance, grace periods.
    case advance
    /// The server set library tracks aside for when the queue runs dry.
    case supplyFallback([Track])
    /// A library rescan kept only these tracks: reserved tracks not among them go.
    case keepFallback(Set<String>)
    /// The server started again: no connection is open, and the profile's timing applies.
    case restart(Timing)
    /// Nobody in the session sent anything for the profile's idle timeout (PirateRadio's 30
    /// minutes): the session ends, as that app's server destroys it. The server decides it,
    /// not a member: a DJ kept while away is no member who could end it.
    case idleEnd
}

/// One input with the server instant it was applied at.
public struct TimedInput: Codable, Hashable, Sendable {
    /// Server time, Unix milliseconds.
    public var at: Millis
    /// What changed the session.
    public var input: SessionInput

    /// Creates a timed input.
    public init(at: Millis, _ input: SessionInput) {
        self.at = at
        self.input = input
    }

    /// The input as a logged record replays it (`Command.asLogged`; `SessionState.applyLogged`).
    public var asLogged: TimedInput {
        switch input {
        case .command(let command, let user): TimedInput(at: at, .command(command.asLogged, by: user))
        case .advance, .supplyFallback, .keepFallback, .restart, .idleEnd: self
        }
    }
}

extension SessionState {
    /// Applies one input: the single entry point for every change, live or replayed.
    ///
    /// A refused command throws and changes nothing; the other inputs cannot fail.
    public mutating func apply(_ timed: TimedInput) throws(JamError) -> Outcome {
        switch timed.input {
        case .command(let command, let user):
            return try apply(command, by: user, at: timed.at)
        case .advance:
            var outcome = Outcome()
            outcome.events = advance(to: timed.at)
            return outcome
        case .supplyFallback(let tracks):
            supplyFallback(tracks)
            return Outcome()
        case .keepFallback(let present):
            if var reserve = fallbackReserve {
                reserve.tracks.removeAll { !present.contains($0.id) }
                fallbackReserve = reserve
            }
            return Outcome()
        case .restart(let timing):
            resetConnections(at: timed.at)
            self.timing = timing
            return Outcome()
        case .idleEnd:
            var outcome = Outcome()
            if !hasEnded { end(reason: "nobody sent anything for the idle timeout", at: timed.at, into: &outcome) }
            return outcome
        }
    }
}

extension SessionState {
    /// Applies a logged input as it was applied when logged: without the checks a later
    /// release added to commands (a song's epoch, `Command.asLogged`; the byte cap on texts,
    /// `SessionRules.capsTextBytes`; names that turn the direction of text or show
    /// nothing, `SessionRules.refusesMisleadingNames`). An older release, or a node of one in the same
    /// cluster, may have logged it without them, and a record that no longer applies would
    /// refuse the whole session it belongs to. New commands keep every check (`apply(_:)`).
    public mutating func applyLogged(_ input: TimedInput) throws(JamError) -> Outcome {
        let (capped, refusing) = (rules.capsTextBytes, rules.refusesMisleadingNames)
        rules.capsTextBytes = false
        rules.refusesMisleadingNames = false
        defer { (rules.capsTextBytes, rules.refusesMisleadingNames) = (capped, refusing) }
        return try apply(input.asLogged)
    }
}
