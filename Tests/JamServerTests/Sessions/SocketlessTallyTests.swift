import JamProtocol
import Testing

@testable import JamServer

/// A member without a socket leaves at the second sweep running that finds them so.
@Suite struct SocketlessTallyTests {
    let session: SessionID = "11111111-1111-4111-8111-111111111111"
    let other: SessionID = "22222222-2222-4222-8222-222222222222"
    let ann: UserID = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
    let bob: UserID = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"

    @Test func aMemberSeenWithoutASocketOnceIsLeftAlone() {
        var tally = SocketlessTally()
        #expect(tally.sweep([session: [ann]]).isEmpty)
    }

    @Test func aMemberWithoutASocketAtTwoSweepsRunningIsDue() {
        var tally = SocketlessTally()
        _ = tally.sweep([session: [ann, bob]])
        #expect(tally.sweep([session: [ann, bob]]) == [session: [ann, bob]])
    }

    @Test func aSocketBetweenTwoSweepsStartsTheCountAgain() {
        var tally = SocketlessTally()
        _ = tally.sweep([session: [ann, bob]])
        // Ann connected meanwhile; Bob did not.
        #expect(tally.sweep([session: [bob]]) == [session: [bob]])
        // Ann's socket closed later without her leaving (the store refused it): two sweeps again.
        #expect(tally.sweep([session: [ann]]).isEmpty)
        #expect(tally.sweep([session: [ann]]) == [session: [ann]])
    }

    @Test func theSameMemberInAnotherSessionCountsOnItsOwn() {
        var tally = SocketlessTally()
        _ = tally.sweep([session: [ann]])
        #expect(tally.sweep([other: [ann]]).isEmpty)
        #expect(tally.sweep([other: [ann]]) == [other: [ann]])
    }
}
