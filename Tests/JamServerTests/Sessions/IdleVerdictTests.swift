import JamCore
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import JamServer

/// A socket finds its session quiet on its own event loop, and the session acts on that on
/// its own, later: a message heard in between must keep the session.
@Suite struct IdleVerdictTests {
    static let host: UserID = "00000000-0000-0000-0008-00000000000a"
    static let idle = IdleTimeout(milliseconds: 1500, code: 4008, reason: "idle")

    static func session() -> LiveSession {
        let state = SessionState(
            id: "00000000-0000-0000-0008-000000000001", joinCode: "ABCDEF", name: "Party", creator: host, creatorName: "Host",
            now: SystemClock().now())
        return LiveSession(
            state: state, storedLsn: 0, wire: OpenJamWire(), environment: .forTests(logger: Logger(label: "test")),
            eventLoop: MultiThreadedEventLoopGroup.singleton.next())
    }

    @Test func aMessageHeardAfterTheSocketLookedKeepsTheSessionAndSaysWhenToLookAgain() async throws {
        let session = Self.session()
        // A minute's timeout: however long this test waits for the session, 400 ms of silence
        // stays short of it.
        let idle = IdleTimeout(milliseconds: 60_000, code: 4008, reason: "idle")
        session.lastMessageNanos.store((NIODeadline.now() - .milliseconds(400)).uptimeNanoseconds, ordering: .relaxed)

        let verdict = await session.idledOut(idle)

        guard case .heard(let lookAgainIn) = verdict else {
            Issue.record("a session heard 400 ms ago was judged \(verdict)")
            return
        }
        #expect(lookAgainIn <= .milliseconds(59_600) && lookAgainIn > .zero, "look again in \(lookAgainIn)")
        #expect(await session.state.hasEnded == false)
        // Owned elsewhere, the same message keeps its socket too.
        await session.ownedElsewhere()
        #expect(await session.idledOut(idle) != .socketClosesAlone)
        await session.shutdown()
    }

    @Test func aSessionSilentForTheTimeoutEnds() async throws {
        let session = Self.session()
        let heard = NIODeadline.now() - .milliseconds(1600)
        session.lastMessageNanos.store(heard.uptimeNanoseconds, ordering: .relaxed)

        #expect(await session.idledOut(Self.idle) == .ends)
        #expect(await session.state.hasEnded)
        await session.shutdown()
    }

    @Test func aSessionLetGoLeavesTheSocketToCloseItself() async throws {
        let session = Self.session()
        // Let go (its lease lost): this node ends nothing of it.
        await session.release("a test lets it go")
        session.lastMessageNanos.store((NIODeadline.now() - .milliseconds(1600)).uptimeNanoseconds, ordering: .relaxed)

        #expect(await session.idledOut(Self.idle) == .socketClosesAlone)
        await session.shutdown()
    }

    @Test func aSessionOwnedElsewhereLeavesTheSocketToCloseItself() async throws {
        let session = Self.session()
        await session.ownedElsewhere()
        session.lastMessageNanos.store((NIODeadline.now() - .milliseconds(1600)).uptimeNanoseconds, ordering: .relaxed)

        #expect(await session.idledOut(Self.idle) == .socketClosesAlone)
        #expect(await session.state.hasEnded == false)
        await session.shutdown()
    }
}

extension LiveSession {
    fileprivate func ownedElsewhere() { role = .replica }
}
