import Foundation
import JamProtocol

/// The calibration probe a playing device sounds when a room is calibrated: a linear
/// chirp across `CalibrationRules.probeLowHz…probeHighHz`, `probeMs` long, with
/// raised-cosine edges. The listening device finds it by correlating its recording with
/// the very same samples, so every client synthesises it identically (the web client's
/// `synthesizeProbe` in `js/probe.js`; `Tests/Fixtures/ClientParity/probe.json` holds
/// both to it).
public enum ProbeSignal {
    /// The probe's samples (mono, peak `CalibrationRules.probePeak`) at `sampleRate` Hz.
    public static func samples(sampleRate: Double) -> [Float] {
        let length = Int((CalibrationRules.probeMs / 1000 * sampleRate).rounded())
        guard length > 0 else { return [] }
        let duration = Double(length) / sampleRate
        let sweep = (CalibrationRules.probeHighHz - CalibrationRules.probeLowHz) / (2 * duration)
        let fade = max(1, Int((CalibrationRules.probeFadeMs / 1000 * sampleRate).rounded()))
        return (0..<length).map { index in
            let t = Double(index) / sampleRate
            let edge = min(index, length - 1 - index)
            let gain = edge >= fade ? 1 : 0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(fade))
            return Float(CalibrationRules.probePeak * gain * sin(2 * Double.pi * (CalibrationRules.probeLowHz * t + sweep * t * t)))
        }
    }
}
