import JamCore
import JamProtocol

/// One room calibration, as a value: the plan it announced, and how a listener's report
/// (or its silence) turns into delay corrections. `CalibrationRunTests` cover the rules.
struct CalibrationRun: Sendable, Equatable {
    let plan: CalibrationPlan
    /// The host who started it: the corrections are applied in their name.
    let startedBy: UserID
    /// After this instant the run ends without a result.
    let deadline: Millis

    /// Plans a run with `listener` listening to `devices` (the playing devices, the
    /// listener among them). The listener goes first: every other device is measured
    /// against it, so what its own speaker and microphone add cancels out.
    /// `listenerCanListen` is what the listener's last report said about recording.
    static func start(
        id: String, listener: DeviceRef, listenerCanListen: Bool?, devices: [DeviceRef], by host: UserID, at now: Millis
    ) throws(JamError) -> CalibrationRun {
        // Such a device could only time the run out, with the room chirping for nothing.
        guard listenerCanListen != false else {
            throw JamError(
                .conflict,
                "device \(listener.deviceId) cannot record the room, so it cannot listen; choose a device that can (a browser page allowed to use a microphone)")
        }
        guard devices.contains(listener) else {
            throw JamError(.conflict, "the listening device is not playing the session's audio; start playback on it first")
        }
        let others = devices.filter { $0 != listener }
        guard !others.isEmpty else {
            throw JamError(.conflict, "no other device is playing the session's audio, so there is nothing to calibrate")
        }
        let order = ([listener] + others).prefix(CalibrationRules.maxDevices)
        let first = Double(now) + CalibrationRules.leadMs
        let probes = order.enumerated().map { index, device in
            CalibrationProbe(userId: device.userId, deviceId: device.deviceId, atMs: first + Double(index) * CalibrationRules.slotMs)
        }
        let plan = CalibrationPlan(
            id: id, listener: listener, probes: probes, probeMs: CalibrationRules.probeMs, windowMs: CalibrationRules.windowMs)
        let last = probes.last?.atMs ?? first
        return CalibrationRun(plan: plan, startedBy: host, deadline: Millis(last + CalibrationRules.reportWithinMs))
    }

    /// Checks that `report` answers this run's plan.
    func check(_ report: CalibrationReport, from user: UserID) throws(JamError) {
        guard report.calibrationId == plan.id else {
            throw JamError(.notFound, "no calibration \(report.calibrationId) is running")
        }
        guard user == plan.listener.userId else {
            throw JamError(.forbidden, "only the listening device reports a calibration")
        }
        let planned = Set(plan.probes.map(\.device))
        if let stray = report.arrivals.first(where: { !planned.contains($0.device) }) {
            throw JamError(.invalidField, "device \(stray.deviceId) of \(stray.userId) had no probe in this calibration")
        }
    }

    /// The outcome of a report, and the delays to set. Each device heard moves by how much
    /// later than the listener's own probe it arrived; a device not heard keeps its delay
    /// and is named, never guessed.
    func outcome(of report: CalibrationReport, delays: (DeviceRef) -> Double) -> (CalibrationOutcome, [DeviceDelay]) {
        var offsets: [DeviceRef: Double] = [:]
        for arrival in report.arrivals { if let offset = arrival.offsetMs { offsets[arrival.device] = offset } }
        guard let reference = offsets[plan.listener], report.problem == nil else {
            let results = plan.probes.map { CalibrationDeviceResult(userId: $0.userId, deviceId: $0.deviceId, heard: offsets[$0.device] != nil, correctionMs: nil, delayMs: delays($0.device)) }
            return (CalibrationOutcome(
                id: plan.id, ok: false,
                message: report.problem?.explanation
                    ?? "the listening device did not hear its own probe; turn its volume up or check its microphone, then try again",
                results: results), [])
        }
        var results: [CalibrationDeviceResult] = []
        var changes: [DeviceDelay] = []
        var missing = 0
        for probe in plan.probes {
            let device = probe.device
            let old = delays(device)
            if device == plan.listener {
                results.append(CalibrationDeviceResult(userId: device.userId, deviceId: device.deviceId, heard: true, correctionMs: 0, delayMs: old))
                continue
            }
            guard let offset = offsets[device] else {
                missing += 1
                results.append(CalibrationDeviceResult(userId: device.userId, deviceId: device.deviceId, heard: false, correctionMs: nil, delayMs: old))
                continue
            }
            let correction = offset - reference
            let new = min(max(old + correction, -Validate.maxDeviceDelayMs), Validate.maxDeviceDelayMs)
            let rounded = (new * 10).rounded() / 10
            if rounded != old { changes.append(DeviceDelay(userId: device.userId, deviceId: device.deviceId, delayMs: rounded)) }
            results.append(CalibrationDeviceResult(
                userId: device.userId, deviceId: device.deviceId, heard: true, correctionMs: (correction * 10).rounded() / 10, delayMs: rounded))
        }
        let others = plan.probes.count - 1
        let heard = others - missing
        let ok = heard > 0
        let message: String
        if !ok {
            message = "no other device was heard; bring the listening device closer or turn the others up"
        } else if missing == 0 {
            message = "calibrated \(heard) device\(heard == 1 ? "" : "s") against the listening device"
        } else {
            message = "calibrated \(heard) of \(others) devices; \(missing) not heard kept \(missing == 1 ? "its" : "their") delay"
        }
        return (CalibrationOutcome(id: plan.id, ok: ok, message: message, results: results), ok ? changes : [])
    }

    /// The outcome when the listener never reported.
    func timedOut(delays: (DeviceRef) -> Double) -> CalibrationOutcome {
        CalibrationOutcome(
            id: plan.id, ok: false, message: "the listening device sent no result in time; nothing was changed",
            results: plan.probes.map {
                CalibrationDeviceResult(userId: $0.userId, deviceId: $0.deviceId, heard: false, correctionMs: nil, delayMs: delays($0.device))
            })
    }
}
