import Foundation
import Testing
import JamCore
import JamProtocol

/// Drives a session with seeded random commands (valid and invalid) and clock moves.
struct Simulation {
    var jam: Jam
    var rng: SeededRandom
    var nextTrack = 1
    /// Nonces of adds sent so far, for retries.
    var sentNonces: [String] = []
    let people: [UserID] = [host, alice, bob, carol, dave, stranger]

    init(seed: UInt64) throws {
        // Unattended sessions pause (a path worth exercising) but do not end: a run that
        // jumps to the end of an abandoned session would stop after a few steps.
        jam = try Jam(members: [alice, bob, carol], timing: Timing(unattendedPauseMs: 10 * 60_000, abandonAfterMs: nil))
        rng = SeededRandom(seed: seed)
    }

    /// One step: a command from someone, or a clock move. Returns the command and user, or nil for a clock move.
    mutating func randomStep() -> (Command, UserID)? {
        if rng.chance(25) { return nil }
        let command = randomCommand(nested: false)
        if case .join = command {
            // Mostly someone who is not in yet, so joins succeed and members come and go.
            let outside = people.filter { jam.state.member($0) == nil }
            return (command, rng.chance(80) && !outside.isEmpty ? rng.pick(outside) : rng.pick(people))
        }
        let members = jam.state.members.map(\.userId)
        let user = rng.chance(35) ? jam.state.hostId : rng.chance(75) && !members.isEmpty ? rng.pick(members) : rng.pick(people)
        return (command, user)
    }

    mutating func moveClock() -> [ServerEnvelope] {
        if rng.chance(50), let deadline = jam.state.nextDeadline() {
            return jam.advance(to: max(jam.now, deadline))
        }
        return jam.wait(Millis(rng.int(0...30_000)))
    }

    mutating func randomItem() -> ItemID {
        var candidates = jam.state.queue.map(\.id)
        if let current = jam.state.current { candidates.append(current.item.id) }
        if let upNext = jam.state.upNext { candidates.append(upNext.item.id) }
        candidates.append(itemID(99_999))
        return rng.pick(candidates)
    }

    mutating func randomCommand(nested: Bool) -> Command {
        switch rng.below(24) {
        case 0...5:
            let roll = rng.below(100)
            if roll < 10, !sentNonces.isEmpty {
                let nonce = rng.pick(sentNonces)
                return .add(track: track(rng.int(1...max(1, nextTrack))), nonce: nonce, itemId: itemID(100_000 + rng.int(0...999)))
            }
            let n = nextTrack
            nextTrack += 1
            if roll < 20, let existing = (jam.state.queue.map(\.track) + [jam.state.current?.item.track].compactMap { $0 }).first {
                return .add(track: existing, nonce: "dup-\(n)", itemId: itemID(n))
            }
            if roll < 25 {
                return .add(track: Track(id: "bad-\(n)", name: "", artist: "x"), nonce: "bad-\(n)", itemId: itemID(n))
            }
            let duration: Int64? = rng.pick([nil, 9_000, 40_000, 40_000, 180_000, 180_000])
            let nonce = "nonce-\(n)"
            sentNonces.append(nonce)
            return .add(track: track(n, durationMs: duration), nonce: nonce, itemId: itemID(n))
        case 6: return .remove(itemId: randomItem())
        case 7...10:
            let queued = jam.state.queue.map(\.id)
            let item = rng.chance(75) && !queued.isEmpty ? rng.pick(queued) : randomItem()
            return .vote(itemId: item, value: rng.pick([-2, -1, -1, 0, 1, 1, 1, 2]))
        case 11: return .skip
        case 12: return .requestSkip
        case 13: return rng.pick([.play, .pause, .resume])
        case 14: return .seek(positionMs: Int64(rng.pick([-5, 0, rng.int(0...200_000)])))
        case 15: return .ready(epoch: jam.state.epoch - Int64(rng.below(2)))
        case 16: return .syncReport(SyncReport(epoch: jam.state.epoch, offsetMs: 0, errorMs: Double(rng.int(0...800)), driftMs: 0))
        case 17:
            switch rng.below(6) {
            case 0: return .updateSettings(SettingsPatch(locked: rng.chance(50)))
            case 1: return .updateSettings(SettingsPatch(skipThreshold: rng.pick([0, 0.3, 0.5, 0.9, 1.5])))
            case 2: return .updateSettings(SettingsPatch(maxQueuedPerMember: rng.pick([0, 2, 20])))
            case 3: return .updateSettings(SettingsPatch(allowDuplicates: rng.chance(30)))
            case 4: return .updateSettings(SettingsPatch(ordering: rng.pick([.votes, .fair])))
            default: return .updateSettings(SettingsPatch(maxMembers: rng.pick([1, 4, 50])))
            }
        case 18: return .setRole(userId: rng.pick(people), role: rng.pick(Role.allCases))
        case 19: return .join(displayName: rng.pick(["Alice", "Bob", "Zed", " ", "Carol"]))
        case 20: return rng.chance(50) ? .connect : .disconnect
        case 21:
            if !nested, rng.chance(30) { return .kick(userId: rng.pick(people)) }
            return .setJoinCode("CODE\(rng.below(100))")
        case 22:
            if !nested, jam.state.members.count > 2 { return .leave }
            return .requestSkip
        default:
            if nested { return .skip }
            return .all((0..<rng.int(1...3)).map { _ in randomCommand(nested: true) })
        }
    }
}

/// Checks that hold after every step, whatever happened.
func checkStructure(_ state: SessionState, sourceLocation: SourceLocation = #_sourceLocation) {
    let queueIds = state.queue.map(\.id)
    #expect(Set(queueIds).count == queueIds.count, "queue IDs are unique", sourceLocation: sourceLocation)
    if let current = state.current { #expect(!queueIds.contains(current.item.id), sourceLocation: sourceLocation) }
    if let upNext = state.upNext {
        #expect(!queueIds.contains(upNext.item.id), sourceLocation: sourceLocation)
        #expect(state.current != nil, "an up-next item always follows a current one", sourceLocation: sourceLocation)
        #expect(upNext.epoch == state.epoch + 1, sourceLocation: sourceLocation)
    }
    if state.current == nil && !state.hasEnded {
        #expect(state.queue.isEmpty, "nothing waits while nothing plays", sourceLocation: sourceLocation)
        #expect(state.skipRequests.isEmpty, "no skip requests without a current item", sourceLocation: sourceLocation)
    }
    if !state.members.isEmpty {
        #expect(state.members.filter { $0.role == .host }.map(\.userId) == [state.hostId], "exactly one host", sourceLocation: sourceLocation)
    }
    let memberIds = Set(state.members.map(\.userId))
    #expect(state.skipRequests.isSubset(of: memberIds), sourceLocation: sourceLocation)
    #expect(state.readyMembers.isSubset(of: memberIds), sourceLocation: sourceLocation)
    #expect(state.banned.isDisjoint(with: memberIds), sourceLocation: sourceLocation)
    #expect(state.queueHead()?.id == state.queueOrder().first, sourceLocation: sourceLocation)
}
