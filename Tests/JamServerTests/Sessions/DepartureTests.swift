import JamCore
import JamProtocol
import Testing

@testable import JamServer

/// Which members' sockets a command ends: the rule `LiveSession` closes sockets by.
@Suite struct DepartureTests {
    static let host: UserID = "00000000-0000-0000-0000-0000000000a1"
    static let bob: UserID = "00000000-0000-0000-0000-0000000000b0"
    static let carol: UserID = "00000000-0000-0000-0000-0000000000c0"

    @Test func aLeaveEndsTheSocketsOfWhoeverLeft() {
        #expect(LiveSession.departures(in: .leave, by: Self.bob) == [.left(Self.bob)])
    }

    @Test func aKickEndsTheSocketsOfWhoeverWasRemovedNotOfTheHost() {
        #expect(LiveSession.departures(in: .kick(userId: Self.bob), by: Self.host) == [.removed(Self.bob)])
    }

    @Test func leavesAndKicksInsideABatchEndSocketsInTheirOrder() {
        let batch = Command.all([.setJoinCode("K7PQ2X"), .kick(userId: Self.bob), .all([.kick(userId: Self.carol)]), .leave])
        #expect(LiveSession.departures(in: batch, by: Self.host) == [.removed(Self.bob), .removed(Self.carol), .left(Self.host)])
    }

    @Test func commandsThatKeepEveryoneEndNoSockets() {
        let kept: [Command] = [.end, .skip, .updateSettings(SettingsPatch(locked: true)), .all([.end, .skip])]
        for command in kept {
            #expect(LiveSession.departures(in: command, by: Self.host).isEmpty, "\(command)")
        }
    }
}
