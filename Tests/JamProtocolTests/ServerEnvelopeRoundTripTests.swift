import Foundation
import Testing
import JamProtocol

/// Representative events per type; the exhaustive switch fails to compile when a type is added.
func sampleEvents(_ type: ServerEventType) -> [ServerEvent] {
    switch type {
    case .stateSync: [.stateSync(Sample.view), .stateSync(Sample.emptyView)]
    case .memberJoined: [.memberJoined(Sample.member)]
    case .memberLeft: [.memberLeft(MemberLeft(userId: Sample.bob, hostId: Sample.alice))]
    case .memberUpdated: [.memberUpdated(Member(userId: "creator1", displayName: "C", role: .cohost, connected: true))]
    case .queueUpdate: [.queueUpdate(QueueUpdate(queue: [Sample.item, Sample.otherItem])), .queueUpdate(QueueUpdate(queue: []))]
    case .queueItemAdded: [.queueItemAdded(QueueItemAdded(item: Sample.item, index: 0)), .queueItemAdded(QueueItemAdded(item: Sample.otherItem, index: 7))]
    case .queueItemRemoved: [.queueItemRemoved(QueueItemRemoved(itemId: Sample.itemA))]
    case .votesUpdate:
        [.votesUpdate(VotesUpdate(itemId: Sample.itemA, score: -4, reason: "-4 votes")),
         .votesUpdate(VotesUpdate(itemId: Sample.itemA, score: 2, reason: "2 votes", movedTo: 3))]
    case .playPrepare:
        [.playPrepare(PlayPrepare(item: Sample.item, epoch: 2, startAt: Sample.t0 + 500, previous: Sample.history)),
         .playPrepare(PlayPrepare(item: Sample.item, epoch: 1, startAt: Sample.t0, previous: nil))]
    case .playCommit: [.playCommit(PlayCommit(itemId: Sample.itemA, epoch: 2, startAt: Sample.t0 + 500, positionMs: 0))]
    case .pause: [.pause(TimelineChange(epoch: 2, positionMs: 1234, atMs: Sample.t0))]
    case .resume: [.resume(TimelineChange(epoch: 2, positionMs: 1234, atMs: Sample.t0 + 500))]
    case .seek: [.seek(TimelineChange(epoch: 2, positionMs: 60_000, atMs: Sample.t0 + 9))]
    case .stopped:
        [.stopped(PlaybackStopped(epoch: 3, previous: Sample.history)), .stopped(PlaybackStopped(epoch: 0, previous: nil))]
    case .skipRequests: [.skipRequests(SkipRequestsUpdate(count: 1, needed: 3))]
    case .sessionUpdated: [.sessionUpdated(SessionUpdated(settings: Sample.settings, name: "Friday", joinCode: "ZX9QW2"))]
    case .pong: [.pong(Pong(clientSendTime: 10.5, serverReceiveTime: 1_700_000_000_000.25, serverSendTime: 1_700_000_000_001.75))]
    case .ack: [.ack(Ack(id: "c1")), .ack(Ack(id: "c2", itemId: Sample.itemA)), .ack(Ack(id: "c3", score: 2))]
    case .error:
        [.error(ErrorEvent(id: "c4", code: .duplicate, message: "\"Song\" is already queued or playing")),
         .error(ErrorEvent(id: nil, code: .malformed, message: "not valid JSON"))]
    case .sessionEnded: [.sessionEnded(SessionEnded(reason: "everybody left"))]
    case .deviceDelay: [.deviceDelay(DeviceDelay(userId: Sample.bob, deviceId: "d2", delayMs: -35.5))]
    case .myChoices:
        [.myChoices(MyChoices(myVotes: [Sample.itemA.rawValue: 1, Sample.itemB.rawValue: -1], mySkipRequest: true)),
         .myChoices(MyChoices(myVotes: [:], mySkipRequest: false))]
    case .syncStatus:
        [.syncStatus(SyncStatusUpdate(devices: [
            DeviceSyncStatus(
                userId: Sample.alice, deviceId: "d1", clockErrorMs: 0.75, playbackErrorMs: -1.25, clockDriftPpm: 8.5,
                outputLatencyMs: 40, delayMs: 12.5, playing: true, canListen: true, ageMs: 900, grade: .good),
            DeviceSyncStatus(
                userId: Sample.bob, deviceId: nil, clockErrorMs: 30, playbackErrorMs: 0, clockDriftPpm: nil,
                outputLatencyMs: nil, delayMs: nil, playing: false, ageMs: 40_000, grade: .poor),
         ])), .syncStatus(SyncStatusUpdate(devices: []))]
    case .calibration:
        [.calibration(CalibrationPlan(
            id: "cal-1", listener: DeviceRef(userId: Sample.alice, deviceId: "d1"),
            probes: [
                CalibrationProbe(userId: Sample.alice, deviceId: "d1", atMs: Double(Sample.t0) + 1_500),
                CalibrationProbe(userId: Sample.bob, deviceId: "d2", atMs: Double(Sample.t0) + 2_500),
            ], probeMs: 80, windowMs: 400))]
    case .calibrationResult:
        [.calibrationResult(CalibrationOutcome(id: "cal-1", ok: true, message: "calibrated 1 device against the listening device", results: [
            CalibrationDeviceResult(userId: Sample.alice, deviceId: "d1", heard: true, correctionMs: 0, delayMs: 0),
            CalibrationDeviceResult(userId: Sample.bob, deviceId: "d2", heard: true, correctionMs: 31.5, delayMs: 31.5),
            CalibrationDeviceResult(userId: Sample.bob, deviceId: "d3", heard: false, correctionMs: nil, delayMs: nil),
         ]))]
    case .resync: [.resync(Resync(userId: Sample.bob, deviceId: "d2")), .resync(Resync(userId: Sample.bob))]
    }
}

struct ServerEnvelopeRoundTripTests {
    @Test func samplesCoverEveryEventType() {
        for type in ServerEventType.allCases {
            let samples = sampleEvents(type)
            #expect(!samples.isEmpty)
            for event in samples { #expect(event.type == type) }
        }
    }

    @Test(arguments: ServerEventType.allCases)
    func everyEventRoundTrips(_ type: ServerEventType) throws {
        for (index, event) in sampleEvents(type).enumerated() {
            let envelope = ServerEnvelope(event: event, epoch: 5, seq: 100 + Int64(index), timestamp: Sample.t0 + 3)
            let decoded = try ServerEnvelope.decode(Data(envelope.jsonString().utf8))
            #expect(decoded == envelope)
            #expect(try roundTrip(envelope) == envelope)
        }
    }

    @Test(arguments: ServerEventType.allCases)
    func envelopeHasExactlyTheFiveFields(_ type: ServerEventType) throws {
        let event = try #require(sampleEvents(type).first)
        let object = try jsonObject(ServerEnvelope(event: event, epoch: 9, seq: 77, timestamp: 123))
        #expect(Set(object.keys) == ["type", "data", "epoch", "seq", "timestamp"])
        #expect(object["type"] as? String == type.rawValue)
        #expect(object["epoch"] as? Int == 9)
        #expect(object["seq"] as? Int == 77)
        #expect(object["timestamp"] as? Int == 123)
    }

    @Test func equalEnvelopesEncodeToEqualBytesWhateverTheirDictionariesOrder() {
        // Equal votes in dictionaries of different capacities, which lay their keys out apart.
        let keys = (0..<40).map { "item-\($0)" }
        var small: [String: Int] = [:]
        var large = [String: Int](minimumCapacity: 4_096)
        for (n, key) in keys.enumerated() { small[key] = n % 2 == 0 ? 1 : -1 }
        for (n, key) in keys.enumerated().reversed() { large[key] = n % 2 == 0 ? 1 : -1 }
        #expect(small == large)
        #expect(Array(small.keys) != Array(large.keys), "the two iterate in different orders")
        var (first, second) = (Sample.view, Sample.view)
        first.myVotes = small
        second.myVotes = large
        let a = ServerEnvelope(event: .stateSync(first), epoch: 1, seq: 2, timestamp: 3)
        let b = ServerEnvelope(event: .stateSync(second), epoch: 1, seq: 2, timestamp: 3)
        #expect(a.jsonString() == b.jsonString())
    }

    @Test func stateSyncCarriesTheSessionViewShape() throws {
        let object = try jsonObject(Sample.view)
        #expect(Set(object.keys) == ["session", "members", "nowPlaying", "queue", "myVotes", "skipRequests", "history", "upNext", "deviceDelays"])
        let delay = try #require((object["deviceDelays"] as? [[String: Any]])?.first)
        #expect(Set(delay.keys) == ["userId", "deviceId", "delayMs"])
        let session = try #require(object["session"] as? [String: Any])
        #expect(Set(session.keys) == ["id", "joinCode", "name", "hostId", "hostDisplayName", "settings", "createdAt"])
        let nowPlaying = try #require(object["nowPlaying"] as? [String: Any])
        #expect(Set(nowPlaying.keys) == ["item", "epoch", "state", "positionMs", "anchorMs"])
        let item = try #require((object["queue"] as? [[String: Any]])?.first)
        #expect(Set(item.keys) == ["id", "track", "addedBy", "addedAt", "score", "reason"])
        #expect((object["myVotes"] as? [String: Int]) == [Sample.itemB.rawValue: -1])
        let skip = try #require(object["skipRequests"] as? [String: Any])
        #expect(Set(skip.keys) == ["count", "needed", "mine"])
    }

    @Test func emptyViewEncodesNowPlayingAbsentAndDecodesNil() throws {
        let decoded = try roundTrip(Sample.emptyView)
        #expect(decoded.nowPlaying == nil)
        #expect(decoded.upNext == nil)
        // A client that sends `null` explicitly decodes the same.
        var object = try jsonObject(Sample.emptyView)
        object["nowPlaying"] = NSNull()
        let data = try JSONSerialization.data(withJSONObject: object)
        #expect(try WireCoding.decode(SessionView.self, from: data) == Sample.emptyView)
    }

    @Test func eventTypeNamesAreTheWireVocabulary() {
        #expect(ServerEventType.allCases.map(\.rawValue) == [
            "stateSync", "memberJoined", "memberLeft", "memberUpdated", "queueUpdate", "queueItemAdded", "queueItemRemoved",
            "votesUpdate", "playPrepare",
            "playCommit", "pause", "resume", "seek", "stopped", "skipRequests", "sessionUpdated", "pong", "ack", "error",
            "sessionEnded", "deviceDelay", "syncStatus", "calibration", "calibrationResult", "resync", "myChoices",
        ])
    }

    @Test func unknownEventTypeIsTyped() {
        do {
            _ = try ServerEnvelope.decode(Data(#"{"type":"fireworks","data":{},"epoch":1,"seq":1,"timestamp":1}"#.utf8))
            Issue.record("an unknown event decoded")
        } catch {
            #expect(error.code == .unknownType)
            #expect(error.message == #"unknown type "fireworks""#)
        }
    }

    @Test func envelopeWithoutSeqIsMalformed() {
        do {
            _ = try ServerEnvelope.decode(Data(#"{"type":"pong","data":{"clientSendTime":1,"serverReceiveTime":2,"serverSendTime":3},"epoch":1,"timestamp":1}"#.utf8))
            Issue.record("an envelope without seq decoded")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message == "missing field seq")
        }
    }

    @Test func envelopeWithWrongPayloadNamesTheField() {
        do {
            _ = try ServerEnvelope.decode(Data(#"{"type":"votesUpdate","data":{"itemId":"x","score":"high"},"epoch":1,"seq":1,"timestamp":1}"#.utf8))
            Issue.record("a bad payload decoded")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message == "field data.score has the wrong type (expected integer)")
        }
    }
}
