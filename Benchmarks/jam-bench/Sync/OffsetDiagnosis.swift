import Foundation
import JamClient

/// `sync --per-device`: where each device's offset error comes from. The benchmark knows
/// every device's true offset, so it can split the error into what the samples allow
/// (their intersection moved along the true drift) and what the drift fit adds.
enum OffsetDiagnosis {
    /// Prints one block per device: its steady errors, fitted vs true drift, the error of
    /// the intersection of its filter's samples under each drift, and its lowest legs.
    static func print(devices: [SimulatedDevice], steady: [String: Distribution]) async {
        for (name, errors) in steady.sorted(by: { $0.key < $1.key }) {
            guard let device = devices.first(where: { $0.name == name }) else { continue }
            let fittedPpm = await device.clockSync.driftMsPerSecond * 1000
            // The clock runs `driftPpm` fast, so server − local falls by that much.
            let truePpm = -device.clock.driftPpm
            Console.line(String(
                format: "  %@: steady mean %.2f p50 %.2f p99 %.2f ms; drift fitted %.2f ppm, true %.2f",
                name, errors.mean, errors.median, errors.p99, fittedPpm, truePpm))
            let samples = await device.clockSync.filterSamples
            guard let r = samples.map(\.3).max() else { continue }
            let serverMinusMonotonic = TrueTime.serverMinusMonotonic()
            func truth(atLocal t: Double) -> Double {
                device.clock.trueOffset(atMonotonic: device.clock.monotonic(atLocal: t), serverMinusMonotonic: serverMinusMonotonic)
            }
            let truthAtR = truth(atLocal: r)
            /// The middle of the samples' constraints moved to r along slope k, minus the truth.
            func intersectionError(ppm: Double) -> Double {
                let k = ppm * 1e-6
                let upper = samples.map { $0.1 - $0.0 + k * (r - $0.0) }.min() ?? .nan
                let lower = samples.map { $0.2 - $0.3 + k * (r - $0.3) }.max() ?? .nan
                return (upper + lower) / 2 - truthAtR
            }
            let up = samples.map { $0.1 - $0.0 - truth(atLocal: $0.0) }.min() ?? .nan
            let down = samples.map { $0.3 + truth(atLocal: $0.3) - $0.2 }.min() ?? .nan
            Console.line(String(
                format: "     %d samples in the filter, lowest up leg %.2f ms, lowest down leg %.2f ms; intersection error with the true drift %.2f ms, with the fitted %.2f ms",
                samples.count, up, down, intersectionError(ppm: truePpm), intersectionError(ppm: fittedPpm)))
        }
    }
}
