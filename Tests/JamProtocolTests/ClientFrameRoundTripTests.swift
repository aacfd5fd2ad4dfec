import Foundation
import Testing
import JamProtocol

/// One representative command per type; the exhaustive switch fails to compile when a type is added.
func sampleCommands(_ type: ClientCommandType) -> [ClientCommand] {
    switch type {
    case .hello: [.hello(Hello(lastSeq: 41)), .hello(Hello(lastSeq: nil)), .hello(Hello(lastSeq: 0))]
    case .ping: [.ping(Ping(clientSendTime: 1_700_000_000_123.25))]
    case .addToQueue:
        [.addToQueue(AddToQueue(track: Sample.fullTrack, nonce: "n-1")),
         .addToQueue(AddToQueue(track: Sample.bareTrack, nonce: String(repeating: "z", count: Validate.maxNonce)))]
    case .removeFromQueue: [.removeFromQueue(ItemRef(itemId: Sample.itemA))]
    case .vote: [.vote(Vote(itemId: Sample.itemA, value: 1)), .vote(Vote(itemId: Sample.itemB, value: -1)), .vote(Vote(itemId: "plain", value: 0))]
    case .skip: [.skip(Skip()), .skip(Skip(epoch: 3))]
    case .requestSkip: [.requestSkip(Skip()), .requestSkip(Skip(epoch: 5))]
    case .withdrawSkipRequest: [.withdrawSkipRequest(Skip()), .withdrawSkipRequest(Skip(epoch: 6))]
    case .play: [.play]
    case .pause: [.pause(Pause()), .pause(Pause(epoch: 7))]
    case .resume: [.resume(Pause()), .resume(Pause(epoch: 8))]
    case .seek: [.seek(Seek(positionMs: 0)), .seek(Seek(positionMs: 90_500)), .seek(Seek(positionMs: 1_000, epoch: 4))]
    case .ready: [.ready(Ready(epoch: 3))]
    case .syncReport:
        [.syncReport(SyncReport(epoch: 3, offsetMs: -12.5, errorMs: 3.25, driftMs: 0.01)),
         .syncReport(SyncReport(
            epoch: 4, offsetMs: 2, errorMs: 0.5, driftMs: -1.5, deviceId: "phone-1", outputLatencyMs: 150, delayMs: -20.5,
            clockDriftPpm: 12.25, playing: true, canListen: false))]
    case .updateSettings:
        [.updateSettings(SettingsPatch(locked: true)),
         .updateSettings(SettingsPatch(
            locked: false, skipThreshold: 0.66, maxMembers: 1000, maxQueuedPerMember: 1, allowDuplicates: true,
            ordering: .fair, fallback: true))]
    case .promote: [.promote(Promote(userId: Sample.bob)), .promote(Promote(userId: Sample.bob, role: .member))]
    case .kick: [.kick(UserRef(userId: "creator1"))]
    case .leave: [.leave]
    case .setDeviceDelay:
        [.setDeviceDelay(SetDeviceDelay(deviceId: "d1", delayMs: 42.5)),
         .setDeviceDelay(SetDeviceDelay(userId: Sample.bob, deviceId: "speaker_2", delayMs: -180))]
    case .calibrate: [.calibrate(Calibrate(deviceId: "d1")), .calibrate(Calibrate(userId: Sample.bob, deviceId: "d2"))]
    case .calibrationReport:
        [.calibrationReport(CalibrationReport(calibrationId: "cal-1", arrivals: [
            ProbeArrival(userId: Sample.alice, deviceId: "d1", offsetMs: 3.25),
            ProbeArrival(userId: Sample.bob, deviceId: "d2", offsetMs: nil),
        ])),
         .calibrationReport(CalibrationReport(calibrationId: "cal-2", arrivals: [
            ProbeArrival(userId: Sample.alice, deviceId: "d1", offsetMs: nil),
         ], problem: .microphoneUnavailable))]
    case .resync: [.resync(Resync(userId: Sample.bob)), .resync(Resync(userId: Sample.bob, deviceId: "d2"))]
    }
}

struct ClientFrameRoundTripTests {
    @Test func samplesCoverEveryCommandType() {
        for type in ClientCommandType.allCases {
            let samples = sampleCommands(type)
            #expect(!samples.isEmpty)
            for command in samples { #expect(command.type == type) }
        }
    }

    @Test(arguments: ClientCommandType.allCases)
    func everyCommandRoundTrips(_ type: ClientCommandType) throws {
        for command in sampleCommands(type) {
            for id in [nil, "req-1"] as [String?] {
                let frame = ClientFrame(command, id: id)
                let decoded = try ClientFrame.decode(Data(frame.jsonString().utf8))
                #expect(decoded == frame)
                // The generic wire coders agree with the frame's own helpers.
                #expect(try roundTrip(frame) == frame)
            }
        }
    }

    @Test(arguments: ClientCommandType.allCases)
    func frameCarriesTypeAndOptionalId(_ type: ClientCommandType) throws {
        let command = try #require(sampleCommands(type).first)
        let withId = try jsonObject(ClientFrame(command, id: "abc"))
        #expect(withId["type"] as? String == type.rawValue)
        #expect(withId["id"] as? String == "abc")
        #expect(Set(withId.keys).isSubset(of: ["type", "data", "id"]))
        let withoutId = try jsonObject(ClientFrame(command))
        #expect(withoutId["id"] == nil)
    }

    @Test func payloadlessCommandsHaveNoData() throws {
        for command in [ClientCommand.skip(Skip()), .requestSkip(Skip()), .play, .pause(Pause()), .resume(Pause()), .leave] {
            #expect(ClientFrame(command).jsonString() == #"{"type":"\#(command.type.rawValue)"}"#)
        }
    }

    @Test func voteFrameHasTheDocumentedShape() {
        let frame = ClientFrame(.vote(Vote(itemId: Sample.itemA, value: -1)), id: "7")
        #expect(frame.jsonString() == #"{"data":{"itemId":"\#(Sample.itemA.rawValue)","value":-1},"id":"7","type":"vote"}"#)
    }

    @Test func handWrittenFramesDecode() throws {
        let add = try ClientFrame.decode(Data(#"""
            {"type":"addToQueue","id":"c9","data":{"nonce":"n1",
             "track":{"id":"lib-1","name":"Song","artist":"Band","source":"appleMusic","durationMs":1000}}}
            """#.utf8))
        #expect(add == ClientFrame(.addToQueue(AddToQueue(
            track: Track(id: "lib-1", name: "Song", artist: "Band", durationMs: 1000, source: .appleMusic), nonce: "n1")), id: "c9"))

        #expect(try ClientFrame.decode(Data(#"{"type":"hello"}"#.utf8)).command == .hello(Hello(lastSeq: nil)))
        #expect(try ClientFrame.decode(Data(#"{"type":"hello","data":null}"#.utf8)).command == .hello(Hello(lastSeq: nil)))
        #expect(try ClientFrame.decode(Data(#"{"type":"hello","data":{"lastSeq":12}}"#.utf8)).command == .hello(Hello(lastSeq: 12)))
        #expect(try ClientFrame.decode(Data(#"{"type":"skip","data":{"ignored":true}}"#.utf8)).command == .skip(Skip()))
        #expect(try ClientFrame.decode(Data(#"{"type":"updateSettings","data":{"ordering":"fair"}}"#.utf8)).command
            == .updateSettings(SettingsPatch(ordering: .fair)))
        #expect(try ClientFrame.decode(Data(#"{"type":"promote","data":{"userId":"u","role":"cohost"}}"#.utf8)).command
            == .promote(Promote(userId: "u", role: .cohost)))
    }

    @Test func unknownExtraFieldsAreIgnored() throws {
        let frame = try ClientFrame.decode(Data(#"{"type":"seek","data":{"positionMs":5,"extra":1},"future":"x"}"#.utf8))
        #expect(frame == ClientFrame(.seek(Seek(positionMs: 5))))
    }

    @Test func commandTypeNamesAreTheWireVocabulary() {
        #expect(ClientCommandType.allCases.map(\.rawValue) == [
            "hello", "ping", "addToQueue", "removeFromQueue", "vote", "skip", "requestSkip", "withdrawSkipRequest", "play", "pause",
            "resume", "seek", "ready", "syncReport", "updateSettings", "promote", "kick", "leave", "setDeviceDelay",
            "calibrate", "calibrationReport", "resync",
        ])
    }
}
