import JamProtocol

/// The steps a host is offered for the settings that are shares or durations rather than
/// counts, with their words. The terminal client offers them; the web client mirrors them
/// in `js/settings-choices.js`, and Tests/Fixtures/ClientParity/settings.json holds both to them.
public enum SettingsChoices {
    /// One step: the value sent, and how a person reads it.
    public struct Choice<Value: Sendable & Equatable>: Sendable, Equatable {
        /// The value a settings patch carries.
        public let value: Value
        /// Lower-case words for it, to be put in a sentence.
        public let words: String
    }

    /// Skip thresholds: a song is skipped when more than this share of the members who may
    /// ask have asked.
    public static let skipThresholds: [Choice<Double>] = [
        Choice(value: 0.25, words: "a quarter"), Choice(value: 1.0 / 3, words: "a third"), Choice(value: 0.5, words: "half"),
        Choice(value: 2.0 / 3, words: "two thirds"), Choice(value: 0.99, words: "nearly everybody"),
    ]

    /// Add cooldowns in seconds; the last is `SessionSettings.cooldownLimit`.
    public static let addCooldowns: [Choice<Int>] = [
        Choice(value: 0, words: "whenever they like"), Choice(value: 60, words: "one a minute"),
        Choice(value: 120, words: "one every 2 minutes"), Choice(value: 300, words: "one every 5 minutes"),
        Choice(value: 600, words: "one every 10 minutes"), Choice(value: 900, words: "one every 15 minutes"),
        Choice(value: 1800, words: "one every 30 minutes"), Choice(value: SessionSettings.cooldownLimit, words: "one an hour"),
    ]

    /// The index of the value closest to `value`, the first of two as close, so a setting
    /// made elsewhere (another client, the API) still shows as a step.
    public static func closest(_ values: [Double], to value: Double) -> Int {
        var best = 0
        for index in values.indices.dropFirst() where abs(values[index] - value) < abs(values[best] - value) {
            best = index
        }
        return best
    }

    /// The index of the skip threshold shown for `threshold`.
    public static func skipThresholdIndex(_ threshold: Double) -> Int {
        closest(skipThresholds.map(\.value), to: threshold)
    }

    /// The index of the add cooldown shown for `seconds`.
    public static func addCooldownIndex(_ seconds: Int) -> Int {
        closest(addCooldowns.map { Double($0.value) }, to: Double(seconds))
    }
}
