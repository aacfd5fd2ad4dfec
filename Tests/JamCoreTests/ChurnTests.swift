import Foundation
import Testing
import JamCore
import JamProtocol

/// Days of people coming and going through one session, on an injected clock: nothing in
/// the state grows without end.
struct ChurnTests {
    static let minute: Millis = 60_000
    static let hour: Millis = 60 * minute

    /// What a long-running session holds at one instant.
    struct Footprint: CustomStringConvertible {
        let members, queue, history, nonces, lastTurn, roundTrips, bytes: Int
        init(_ state: SessionState) throws {
            members = state.members.count
            queue = state.queue.count
            history = state.history.count
            nonces = state.nonces.count
            lastTurn = state.lastTurn.count
            roundTrips = state.roundTrips.count
            bytes = try JSONEncoder().encode(state).count
        }
        var description: String {
            "members \(members), queue \(queue), history \(history), nonces \(nonces), lastTurn \(lastTurn), roundTrips \(roundTrips), \(bytes) bytes"
        }
    }

    /// A guest a minute joins, adds two short songs, votes, reports its clock and leaves
    /// its tab after ten minutes; every fifth comes back once, half an hour later. The host
    /// stays. Returns the footprint at the end of each day.
    static func churn(days: Int) throws -> [Footprint] {
        let timing = Timing(unattendedPauseMs: 15 * minute, abandonAfterMs: 24 * hour, dropAwayMs: hour)
        var jam = try Jam(members: [], settings: SessionSettings(maxMembers: 500, ordering: .fair), timing: timing)
        var footprints: [Footprint] = []
        var song = 0
        for step in 1...(days * 24 * 60) {
            jam.wait(minute)
            let guest = user(1_000 + step)
            try jam.apply(.join(displayName: "Guest \(step)"), by: guest)
            try jam.apply(.connect, by: guest)
            for _ in 0..<2 {
                song += 1
                try jam.add(song, by: guest, durationMs: 25_000)
            }
            if let other = jam.state.queue.first(where: { $0.addedBy != guest }) {
                try jam.apply(.vote(itemId: other.id, value: 1), by: guest)
            }
            try jam.apply(.syncReport(SyncReport(epoch: jam.state.epoch, offsetMs: 0, errorMs: 3, driftMs: 0)), by: guest)
            let leaving = user(1_000 + step - 10)
            if jam.state.member(leaving) != nil { try jam.apply(.disconnect, by: leaving) }
            let returning = user(1_000 + step - 40)
            if step > 40, (step - 40) % 5 == 0, jam.state.member(returning) != nil {
                try jam.apply(.connect, by: returning)
                try jam.apply(.disconnect, by: returning)
            }
            if step % (24 * 60) == 0 { footprints.append(try Footprint(jam.state)) }
        }
        #expect(!jam.state.hasEnded)
        return footprints
    }

    @Test func threeDaysOfGuestsComingAndGoingLeaveTheSessionNoBiggerThanAfterTheSecond() throws {
        let days = try Self.churn(days: 3)
        let (second, third) = (days[1], days[2])
        // Bounded by the rules, whatever the day: the host, the guests of the last 10 min and
        // of the hour they may stay away, the returning fifth's extra half hour; the history
        // limit; the nonce limit.
        for day in days {
            #expect(day.members <= 1 + 10 + 60 + 30 / 5 + 1, "\(day)")
            #expect(day.history <= SessionState.historyLimit, "\(day)")
            #expect(day.nonces <= SessionState.nonceLimit, "\(day)")
            #expect(day.lastTurn <= day.members + day.queue, "\(day)")
            #expect(day.roundTrips <= day.members, "\(day)")
            #expect(day.queue <= 20, "the songs are shorter than the time between adds: \(day)")
        }
        // 2,880 adds a day fill the nonce table in the second day; from then on, flat.
        #expect(second.nonces == SessionState.nonceLimit)
        #expect(Double(third.bytes) <= Double(second.bytes) * 1.05, "day 2: \(second); day 3: \(third)")
    }
}
