import JamCore
import JamProtocol
import Logging
import NIOPosix
import Testing

@testable import JamServer

/// A replica follows an owner whose build numbers a command's events differently (a rolling
/// upgrade): the stored numbers win, as they do when a session is recovered.
@Suite struct ReplicaNumberingTests {
    static let host: UserID = "00000000-0000-0000-0005-00000000000a"
    static let id: SessionID = "00000000-0000-0000-0005-000000000001"
    static let t0: Millis = 1_700_000_000_000

    /// A replica of a new session, its record 0 applied, with connection 1 attached at its seq.
    static func replica(of state: SessionState) async -> LiveSession {
        let logger = Logger(label: "test")
        let environment = SessionEnvironment.forTests(logger: logger)
        let session = LiveSession(
            state: state, storedLsn: 0, wire: OpenJamWire(), environment: environment, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        await session.becomeReplica(attaching: 1, at: state.seq)
        return session
    }

    /// The owner's record `lsn` of `input`, numbered `extra` events beyond what this build makes of it.
    static func record(_ lsn: Int64, _ input: TimedInput, after state: inout SessionState, extra: Int64) throws -> LogRecord {
        let firstSeq = state.seq + 1
        _ = try state.apply(input)
        state.seq += extra
        return LogRecord(lsn: lsn, firstSeq: firstSeq, lastSeq: state.seq, wakeAt: nil, inputs: LogCoding.encode([input]))
    }

    static func add(_ n: Int) -> TimedInput {
        let track = Track(id: "t\(n)", name: "Track \(n)", artist: "Artist")
        return TimedInput(at: t0 + Millis(n), .command(.add(track: track, nonce: "n\(n)", itemId: ItemID("00000000-0000-0000-0005-0000000001\(n)0")), by: host))
    }

    @Test(arguments: [3, -1] as [Int64])
    func aRecordNumberedByAnotherBuildTakesItsStoredNumbersAndItsFramesReachNobody(_ extra: Int64) async throws {
        var owner = SessionState(id: Self.id, joinCode: "ABCDEF", name: "Party", creator: Self.host, creatorName: "Host", now: Self.t0)
        let session = await Self.replica(of: owner)
        let before = owner.seq

        let first = try Self.record(1, Self.add(1), after: &owner, extra: extra)
        await session.follow([first])
        #expect(await session.state.seq == first.lastSeq, "the stored numbers win, more or fewer")
        #expect(await session.keptFrames == 0, "this node's own numbering of the record goes to nobody")
        if first.lastSeq > before {
            #expect(await session.resumes(1, after: before) == false, "whoever is behind gets the whole state")
        }
        #expect(await session.resumes(1, after: first.lastSeq) == true)

        // The owner's next record, numbered as this build numbers it, is followed as usual.
        let second = try Self.record(2, Self.add(2), after: &owner, extra: 0)
        await session.follow([second])
        #expect(await session.state.seq == second.lastSeq)
        #expect(await session.keptFrames == Int(second.lastSeq - first.lastSeq))
        #expect(await session.resumes(1, after: first.lastSeq) == true, "the second record's frames serve resumes")
    }
}

extension LiveSession {
    /// Test access: the session follows its owner, and `connection` is attached at `seq`.
    fileprivate func becomeReplica(attaching connection: ConnectionID, at seq: Int64) {
        role = .replica
        outbox.attach(connection, user: ReplicaNumberingTests.host, syncedSeq: seq)
    }

    /// Test access: frames kept for resumes.
    fileprivate var keptFrames: Int { outbox.ringCount }

    /// Test access: whether `connection` can resume after `seq` from the frames kept.
    fileprivate func resumes(_ connection: ConnectionID, after seq: Int64) -> Bool {
        outbox.replay(to: connection, after: seq, now: environment.clock.now()) != nil
    }
}
