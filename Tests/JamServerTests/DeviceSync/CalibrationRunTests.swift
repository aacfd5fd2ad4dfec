import JamProtocol
import Testing

@testable import JamServer

struct CalibrationRunTests {
    let host: UserID = "host"
    let listener = DeviceRef(userId: "host", deviceId: "mic")
    let phone = DeviceRef(userId: "alice", deviceId: "phone")
    let speaker = DeviceRef(userId: "bob", deviceId: "speaker")

    func run() throws -> CalibrationRun {
        try CalibrationRun.start(id: "cal", listener: listener, listenerCanListen: nil, devices: [phone, listener, speaker], by: host, at: 100_000)
    }

    func arrival(_ device: DeviceRef, _ offset: Double?) -> ProbeArrival {
        ProbeArrival(userId: device.userId, deviceId: device.deviceId, offsetMs: offset)
    }

    @Test func theListenerPlaysFirstAndTheOthersFollowOneSlotApart() throws {
        let plan = try run().plan
        #expect(plan.probes.map(\.device) == [listener, phone, speaker])
        #expect(plan.probes.map(\.atMs) == [103_000, 104_400, 105_800])
        #expect(plan.repeats == 3)
        #expect(plan.windowMs == CalibrationRules.windowMs)
        #expect(try run().deadline == 105_800 + 15_000)
    }

    @Test func aListenerThatDoesNotPlayOrHasNobodyToHearIsRefused() {
        #expect(throws: JamError.self) { try CalibrationRun.start(id: "c", listener: listener, listenerCanListen: nil, devices: [phone], by: host, at: 0) }
        #expect(throws: JamError.self) { try CalibrationRun.start(id: "c", listener: listener, listenerCanListen: nil, devices: [listener], by: host, at: 0) }
    }

    @Test func aListenerThatSaidItCannotRecordIsRefusedAndOneThatSaidNothingIsTaken() throws {
        let devices = [phone, listener, speaker]
        let refusal = #expect(throws: JamError.self) {
            try CalibrationRun.start(id: "c", listener: listener, listenerCanListen: false, devices: devices, by: host, at: 0)
        }
        #expect(refusal?.code == .conflict)
        #expect(refusal?.message.contains("cannot record the room") == true)
        #expect(try CalibrationRun.start(id: "c", listener: listener, listenerCanListen: true, devices: devices, by: host, at: 0).plan.listener == listener)
        #expect(try CalibrationRun.start(id: "c", listener: listener, listenerCanListen: nil, devices: devices, by: host, at: 0).plan.listener == listener)
    }

    @Test func correctionsAreMeasuredAgainstTheListenersOwnProbe() throws {
        let report = CalibrationReport(calibrationId: "cal", arrivals: [arrival(listener, 12), arrival(phone, 42.5), arrival(speaker, -8)])
        let existing: [DeviceRef: Double] = [speaker: 100]
        let (outcome, changes) = try run().outcome(of: report) { existing[$0] ?? 0 }
        #expect(outcome.ok)
        #expect(changes == [
            DeviceDelay(userId: "alice", deviceId: "phone", delayMs: 30.5),
            DeviceDelay(userId: "bob", deviceId: "speaker", delayMs: 80),
        ])
        #expect(outcome.results.map(\.correctionMs) == [0, 30.5, -20])
        #expect(outcome.results.allSatisfy { $0.heard })
    }

    @Test func aDeviceNotHeardKeepsItsDelayAndIsNamed() throws {
        let report = CalibrationReport(calibrationId: "cal", arrivals: [arrival(listener, 0), arrival(phone, 25), arrival(speaker, nil)])
        let (outcome, changes) = try run().outcome(of: report) { _ in 0 }
        #expect(outcome.ok)
        #expect(changes.map(\.device) == [phone])
        #expect(outcome.results.last == CalibrationDeviceResult(userId: "bob", deviceId: "speaker", heard: false, correctionMs: nil, delayMs: 0))
        #expect(outcome.message.contains("1 not heard"))
    }

    @Test func withoutTheListenersOwnProbeNothingChanges() throws {
        let report = CalibrationReport(calibrationId: "cal", arrivals: [arrival(listener, nil), arrival(phone, 25), arrival(speaker, 3)])
        let (outcome, changes) = try run().outcome(of: report) { _ in 0 }
        #expect(!outcome.ok)
        #expect(changes.isEmpty)
        #expect(outcome.message.contains("did not hear its own probe"))
    }

    @Test func aListenerThatCouldNotListenIsNamedAsTheCauseAndNothingChanges() throws {
        let silent = [arrival(listener, nil), arrival(phone, nil), arrival(speaker, nil)]
        for problem in ListenerProblem.allCases {
            let report = CalibrationReport(calibrationId: "cal", arrivals: silent, problem: problem)
            try report.validate()
            let (outcome, changes) = try run().outcome(of: report) { _ in 0 }
            #expect(!outcome.ok)
            #expect(changes.isEmpty)
            #expect(outcome.message == problem.explanation)
            #expect(!outcome.message.contains("volume"), "the cause is named, not the volume")
        }
        // A problem and a probe heard contradict each other.
        let mixed = CalibrationReport(calibrationId: "cal", arrivals: [arrival(listener, 3)], problem: .microphoneRefused)
        #expect(throws: JamError(.invalidField, "a report with a problem heard nothing: every offsetMs must be null")) { try mixed.validate() }
    }

    @Test func aReportFromAnotherMemberForAnotherRunOrAboutAStrayDeviceIsRefused() throws {
        let run = try run()
        let good = CalibrationReport(calibrationId: "cal", arrivals: [arrival(listener, 0)])
        #expect(throws: JamError.self) { try run.check(good, from: "alice") }
        #expect(throws: JamError.self) { try run.check(CalibrationReport(calibrationId: "other", arrivals: []), from: host) }
        let stray = CalibrationReport(calibrationId: "cal", arrivals: [arrival(DeviceRef(userId: "eve", deviceId: "x"), 1)])
        #expect(throws: JamError.self) { try run.check(stray, from: host) }
        try run.check(good, from: host)
    }

    @Test func aCorrectionNeverPushesADelayPastTheLimit() throws {
        let report = CalibrationReport(calibrationId: "cal", arrivals: [arrival(listener, -300), arrival(phone, 300)])
        let (_, changes) = try run().outcome(of: report) { _ in 1_900 }
        #expect(changes.first?.delayMs == Validate.maxDeviceDelayMs)
    }
}
