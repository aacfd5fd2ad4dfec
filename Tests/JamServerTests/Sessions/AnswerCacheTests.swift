import Foundation
import JamCore
import JamProtocol
import NIOCore
import Testing

@testable import JamServer

/// The answers a session keeps tell a command sent again from an idempotency key reused for
/// another request, and keep doing so only as long as they keep the answer.
@Suite struct AnswerCacheTests {
    static let user: UserID = "00000000-0000-0000-0009-00000000000a"
    static let itemA: ItemID = "00000000-0000-0000-0009-0000000000a1"
    static let itemB: ItemID = "00000000-0000-0000-0009-0000000000b1"

    static func key(_ command: Command, _ value: String = "k-1") throws -> String {
        LiveSession.answerKey(user, LiveSession.replyId(for: try IdempotencyKey(value), command))
    }

    static func answer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    @Test func theSameRequestFindsItsAnswerAndAnotherUnderItsKeyIsToldApart() throws {
        var cache = AnswerCache()
        let first = try Self.key(.vote(itemId: Self.itemA, value: 1))
        cache.remember(Self.answer("first"), for: first)
        #expect(cache.lookup(first) == .answered(Self.answer("first")))
        #expect(cache.lookup(try Self.key(.vote(itemId: Self.itemB, value: 1))) == .keyUsedForAnotherRequest)
        #expect(cache.lookup(try Self.key(.vote(itemId: Self.itemA, value: 0))) == .keyUsedForAnotherRequest)
        // Another key, or the same key on another kind of change, is a change of its own.
        #expect(cache.lookup(try Self.key(.vote(itemId: Self.itemB, value: 1), "k-2")) == .none)
        #expect(cache.lookup(try Self.key(.skip)) == .none)
    }

    @Test func anAddSentAgainWithANewNonceOrItemIdIsTheSameRequest() throws {
        let track = Track(id: "t-1", name: "Song", artist: "Artist", album: nil, durationMs: 1000, source: .external)
        var cache = AnswerCache()
        cache.remember(Self.answer("added"), for: try Self.key(.add(track: track, nonce: "n-1", itemId: Self.itemA)))
        #expect(cache.lookup(try Self.key(.add(track: track, nonce: "n-2", itemId: Self.itemB))) == .answered(Self.answer("added")))
        var other = track
        other.id = "t-2"
        #expect(cache.lookup(try Self.key(.add(track: other, nonce: "n-1", itemId: Self.itemA))) == .keyUsedForAnotherRequest)
    }

    @Test func aKeyKeptBeforeFingerprintsAnswersAnyRequestUnderIt() throws {
        // The form an older release logged: no fingerprint after the key.
        var cache = AnswerCache()
        cache.remember(Self.answer("old"), for: "\(Self.user.rawValue) key:vote:k-1")
        #expect(cache.lookup(try Self.key(.vote(itemId: Self.itemB, value: -1))) == .answered(Self.answer("old")))
    }

    @Test func aUserIdWithSpacesKeepsItsKeysApart() throws {
        // A compatibility profile's token may name any user, spaces and all.
        let user: UserID = "dj with spaces"
        let first = LiveSession.answerKey(user, LiveSession.replyId(for: try IdempotencyKey("k-1"), .vote(itemId: Self.itemA, value: 1)))
        let other = LiveSession.answerKey(user, LiveSession.replyId(for: try IdempotencyKey("k-1"), .vote(itemId: Self.itemB, value: 1)))
        var cache = AnswerCache()
        cache.remember(Self.answer("first"), for: first)
        #expect(cache.lookup(first) == .answered(Self.answer("first")))
        #expect(cache.lookup(other) == .keyUsedForAnotherRequest)
    }

    @Test func aKeysRefusalIsNotRememberedWhateverSpacesItsUserHolds() throws {
        let key = LiveSession.replyId(for: try IdempotencyKey("k-1"), .skip)
        #expect(!LiveSession.remembersRefusal(.conflict, answerKey: LiveSession.answerKey("dj with spaces", key)))
        #expect(!LiveSession.remembersRefusal(.conflict, answerKey: LiveSession.answerKey("dj with spaces", "key:skip:k-1")), "an id of an older release")
        #expect(LiveSession.remembersRefusal(.conflict, answerKey: LiveSession.answerKey("dj with spaces", "web 1")), "a socket's id")
    }

    @Test func aSocketIdRefusedAsUsedForAnotherCommandKeepsThatCommandsAnswer() {
        #expect(!LiveSession.remembersRefusal(.keyReused, answerKey: LiveSession.answerKey(Self.user, "web 1")))
    }

    @Test func aSocketIdShapedLikeAKeyIsOnlyItself() {
        var cache = AnswerCache()
        cache.remember(Self.answer("a"), for: LiveSession.answerKey(Self.user, "key:a"))
        // No fingerprint after the space: not a key's other form.
        #expect(cache.lookup(LiveSession.answerKey(Self.user, "key:a b")) == .none)
    }

    @Test func aSocketsCommandIdIsFoundAsItWasSent() {
        var cache = AnswerCache()
        let id = LiveSession.answerKey(Self.user, "web-1 with space")
        cache.remember(Self.answer("ack"), for: id)
        #expect(cache.lookup(id) == .answered(Self.answer("ack")))
        #expect(cache.lookup(LiveSession.answerKey(Self.user, "web-2")) == .none)
    }

    @Test func aKeyWhoseAnswerWasForgottenNamesNothing() throws {
        var cache = AnswerCache()
        cache.remember(Self.answer("first"), for: try Self.key(.vote(itemId: Self.itemA, value: 1)))
        for n in 0..<AnswerCache.limit { cache.remember(Self.answer("\(n)"), for: LiveSession.answerKey(Self.user, "socket-\(n)")) }
        #expect(cache.lookup(try Self.key(.vote(itemId: Self.itemB, value: 1))) == .none)
        #expect(cache.lookup(try Self.key(.vote(itemId: Self.itemA, value: 1))) == .none)
    }

    @Test func aDevicesReportsArePushedOutOnlyByReports() {
        var cache = AnswerCache()
        let skip = LiveSession.answerKey(Self.user, "skip-1")
        cache.remember(Self.answer("skipped"), for: skip, lane: AnswerCache.Lane(of: .skip))
        let firstReady = LiveSession.answerKey(Self.user, "ready-0")
        for n in 0...AnswerCache.limit {
            cache.remember(Self.answer("\(n)"), for: LiveSession.answerKey(Self.user, "ready-\(n)"), lane: AnswerCache.Lane(of: .ready(epoch: 1)))
        }
        #expect(cache.lookup(skip) == .answered(Self.answer("skipped")))
        #expect(cache.lookup(firstReady) == .none, "the reports keep their last \(AnswerCache.reportLimit)")
        #expect(cache.lookup(LiveSession.answerKey(Self.user, "ready-\(AnswerCache.limit)")) != .none)
        #expect(cache.stored.count == 1 + AnswerCache.reportLimit)
    }

    @Test func onlyADevicesReportsGoApart() {
        #expect(AnswerCache.Lane(of: .ready(epoch: 1)) == .report)
        #expect(AnswerCache.Lane(of: .whileCurrent(epoch: 1, command: .ready(epoch: 1))) == .report)
        // A replica's departures are sent again under their id after an unknown outcome.
        for command: Command in [.connect, .disconnect, .skip, .all([.ready(epoch: 1), .skip])] {
            #expect(AnswerCache.Lane(of: command) == .change, "\(command)")
        }
    }

    @Test func aSnapshotsAnswersGoBackToTheirLanes() {
        var cache = AnswerCache()
        let oldest = LiveSession.answerKey(Self.user, "change-0")
        for n in 0..<AnswerCache.limit {
            cache.remember(Self.answer("c\(n)"), for: LiveSession.answerKey(Self.user, "change-\(n)"), lane: .change)
        }
        for n in 0..<AnswerCache.reportLimit {
            cache.remember(Self.answer("r\(n)"), for: LiveSession.answerKey(Self.user, "ready-\(n)"), lane: .report)
        }
        let stored = cache.stored
        #expect(stored.count == AnswerCache.limit + AnswerCache.reportLimit)
        #expect(stored.filter { $0.report == true }.count == AnswerCache.reportLimit)
        var restored = AnswerCache(restoring: stored)
        #expect(restored.lookup(oldest) != .none, "a full list of reports does not push out the oldest change")
        // A new report pushes out the oldest report, not a change.
        restored.remember(Self.answer("r-new"), for: LiveSession.answerKey(Self.user, "ready-new"), lane: .report)
        #expect(restored.lookup(oldest) != .none)
        #expect(restored.lookup(LiveSession.answerKey(Self.user, "ready-0")) == .none)
    }

    @Test func answersStoredBeforeTheListsReadBackWithTheChanges() throws {
        let old = try JSONDecoder().decode([StoredAnswer].self, from: Data(#"[{"key":"u k","frame":"{}"}]"#.utf8))
        #expect(old == [StoredAnswer(key: "u k", frame: "{}")])
        #expect(AnswerCache(restoring: old).lookup("u k") != .none)
    }

    @Test func aLoggedTurnsAnswerTakesTheLaneOfItsFirstInput() {
        let ready = TimedInput(at: 1, .command(.ready(epoch: 2), by: Self.user))
        let skip = TimedInput(at: 1, .command(.skip, by: Self.user))
        #expect(AnswerCache.Lane(of: [ready, TimedInput(at: 1, .advance)]) == .report)
        #expect(AnswerCache.Lane(of: [skip]) == .change)
        #expect(AnswerCache.Lane(of: [TimedInput]()) == .change)
    }

    // MARK: A socket's command ids

    static func socketKey(_ id: String) -> String { LiveSession.answerKey(user, id) }

    /// The fingerprint a socket's `command` is looked up with.
    static func asked(_ command: Command) -> UInt64 { RequestFingerprint.forSocket(command) }

    /// A host's re-sync of the user's device, as a device-sync request's fingerprint.
    static var resync: UInt64 { RequestFingerprint.forSocket(DeviceSyncRequest.resync(Resync(userId: user, deviceId: "phone"))) }

    static func isAnswered(_ lookup: AnswerCache.Lookup) -> Bool {
        if case .answered = lookup { true } else { false }
    }

    @Test func aSocketIdSentWithAnotherCommandIsToldApartFromTheSameCommandSentAgain() {
        let vote = Command.vote(itemId: Self.itemA, value: 1)
        var cache = AnswerCache()
        cache.remember(Self.answer("voted"), for: Self.socketKey("web-1"), command: RequestFingerprint.forSocket(vote))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(vote)) == .answered(Self.answer("voted")))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.vote(itemId: Self.itemB, value: 1))) == .keyUsedForAnotherRequest)
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.skip)) == .keyUsedForAnotherRequest)
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.resync) == .keyUsedForAnotherRequest, "a device-sync request under a command's id")
        #expect(cache.lookup(Self.socketKey("web-2"), sentWith: Self.asked(vote)) == .none)
    }

    @Test func anAddSentAgainOnASocketWithANewNonceOrItemIdIsTheSameCommand() {
        let track = Track(id: "t-1", name: "Song", artist: "Artist", album: nil, durationMs: 1000, source: .external)
        var cache = AnswerCache()
        cache.remember(Self.answer("added"), for: Self.socketKey("web-1"), command: RequestFingerprint.forSocket(.add(track: track, nonce: "n-1", itemId: Self.itemA)))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.add(track: track, nonce: "n-2", itemId: Self.itemB))) == .answered(Self.answer("added")))
    }

    @Test func aSocketAnswerKeptWithoutItsCommandAnswersWhateverIsSent() {
        // An owner's reply this node no longer waited for, or one an older release stored.
        var cache = AnswerCache()
        cache.remember(Self.answer("ok"), for: Self.socketKey("web-1"))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.skip)) == .answered(Self.answer("ok")))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.resync) == .answered(Self.answer("ok")))
    }

    @Test func aSnapshotKeepsWhichCommandEachSocketIdAnswered() throws {
        let vote = Command.vote(itemId: Self.itemA, value: 1)
        var cache = AnswerCache()
        cache.remember(Self.answer("voted"), for: Self.socketKey("web-1"), command: RequestFingerprint.forSocket(vote))
        cache.remember(Self.answer("ok"), for: Self.socketKey("web-2"))
        let bytes = try JSONEncoder().encode(cache.stored)
        let restored = AnswerCache(restoring: try JSONDecoder().decode([StoredAnswer].self, from: bytes))
        #expect(Self.isAnswered(restored.lookup(Self.socketKey("web-1"), sentWith: Self.asked(vote))))
        #expect(restored.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.skip)) == .keyUsedForAnotherRequest)
        #expect(Self.isAnswered(restored.lookup(Self.socketKey("web-2"), sentWith: Self.asked(.skip))))
        #expect(cache.stored.map(\.command) == [RequestFingerprint.of(vote), nil])
    }

    @Test func aForgottenSocketAnswerTakesItsCommandWithIt() {
        var cache = AnswerCache()
        cache.remember(Self.answer("voted"), for: Self.socketKey("web-1"), command: RequestFingerprint.forSocket(.vote(itemId: Self.itemA, value: 1)))
        for n in 0..<AnswerCache.limit { cache.remember(Self.answer("c\(n)"), for: Self.socketKey("change-\(n)")) }
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.skip)) == .none)
        // Kept again without one (a late owner's reply), the id answers whatever is sent.
        cache.remember(Self.answer("skipped"), for: Self.socketKey("web-1"))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.vote(itemId: Self.itemB, value: 1))) == .answered(Self.answer("skipped")))
    }

    @Test func aDeviceSyncRequestSentAgainIsTheSameRequestAndAnyOtherIsNot() {
        let calibrate = DeviceSyncRequest.calibrate(Calibrate(userId: Self.user, deviceId: "phone"))
        var cache = AnswerCache()
        cache.remember(Self.answer("calibrating"), for: Self.socketKey("web-1"), command: RequestFingerprint.forSocket(calibrate))
        let again = RequestFingerprint.forSocket(DeviceSyncRequest.calibrate(Calibrate(userId: Self.user, deviceId: "phone")))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: again) == .answered(Self.answer("calibrating")))
        let otherDevice = RequestFingerprint.forSocket(DeviceSyncRequest.calibrate(Calibrate(userId: Self.user, deviceId: "laptop")))
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: otherDevice) == .keyUsedForAnotherRequest)
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.resync) == .keyUsedForAnotherRequest)
        #expect(cache.lookup(Self.socketKey("web-1"), sentWith: Self.asked(.skip)) == .keyUsedForAnotherRequest, "a command under a calibration's id")
        // A sync report is applied as its command: one fingerprint for both.
        let report = SyncReport(epoch: 3, offsetMs: 1, errorMs: 0.5, driftMs: 0, deviceId: "phone")
        #expect(RequestFingerprint.forSocket(DeviceSyncRequest.report(report)) == Self.asked(.syncReport(report)))
    }

    @Test func aFingerprintReadsBackFromTheTextItIsStoredAs() {
        for value: UInt64 in [0, 1, 0xabc, .max] {
            let text = RequestFingerprint.text(value)
            #expect(text.count == RequestFingerprint.length && RequestFingerprint.value(text) == value)
        }
        #expect(RequestFingerprint.of(.skip) == RequestFingerprint.text(RequestFingerprint.forSocket(.skip)))
        for bad in ["", "abc", "ABCDEF0123456789", "0123456789abcdeg", "0123456789abcdef0", "+123456789abcdef"] {
            #expect(RequestFingerprint.value(bad) == nil, "\(bad)")
        }
    }
}
