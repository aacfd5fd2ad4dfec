import JamProtocol

/// The host's settings on the live screen: one row each, changed with ← and →.
enum SettingsRow: CaseIterable, Sendable {
    case locked, fallback, duplicates, ordering, threshold, cooldown, maxQueued, maxMembers

    /// Skip thresholds offered: "more than" this share of the members who may ask.
    static let thresholds: [(value: Double, words: String)] = [
        (0.25, "a quarter"), (1.0 / 3, "a third"), (0.5, "half"), (2.0 / 3, "two thirds"), (0.99, "nearly everybody"),
    ]
    /// Add cooldowns offered, in seconds.
    static let cooldowns: [(value: Int, words: String)] = [
        (0, "whenever they like"), (60, "one a minute"), (120, "one every 2 minutes"), (300, "one every 5 minutes"),
        (600, "one every 10 minutes"), (900, "one every 15 minutes"), (1800, "one every 30 minutes"), (3600, "one an hour"),
    ]

    var label: String {
        switch self {
        case .locked: "Lock the queue"
        case .fallback: "Keep the music going"
        case .duplicates: "Allow a song twice"
        case .ordering: "Queue order"
        case .threshold: "Skip a song when"
        case .cooldown: "Members add"
        case .maxQueued: "Songs waiting per member"
        case .maxMembers: "Most people"
        }
    }

    func value(_ settings: SessionSettings) -> String {
        switch self {
        case .locked: settings.locked ? "on" : "off"
        case .fallback: settings.fallback ? "on" : "off"
        case .duplicates: settings.allowDuplicates ? "on" : "off"
        case .ordering: settings.ordering == .fair ? "take turns (fair)" : "most votes first"
        case .threshold: "more than \(Self.thresholds[Self.closest(Self.thresholds.map(\.value), settings.skipThreshold)].words) ask"
        case .cooldown: Self.cooldowns[Self.closest(Self.cooldowns.map { Double($0.value) }, Double(settings.addCooldownSeconds))].words
        case .maxQueued: "\(settings.maxQueuedPerMember)"
        case .maxMembers: "\(settings.maxMembers)"
        }
    }

    /// The change one step left (-1) or right (+1) asks for; nil at either end.
    func patch(_ settings: SessionSettings, step: Int) -> SettingsPatch? {
        switch self {
        case .locked: return SettingsPatch(locked: !settings.locked)
        case .fallback: return SettingsPatch(fallback: !settings.fallback)
        case .duplicates: return SettingsPatch(allowDuplicates: !settings.allowDuplicates)
        case .ordering: return SettingsPatch(ordering: settings.ordering == .fair ? .votes : .fair)
        case .threshold:
            let index = Self.closest(Self.thresholds.map(\.value), settings.skipThreshold) + step
            return Self.thresholds.indices.contains(index) ? SettingsPatch(skipThreshold: Self.thresholds[index].value) : nil
        case .cooldown:
            let index = Self.closest(Self.cooldowns.map { Double($0.value) }, Double(settings.addCooldownSeconds)) + step
            return Self.cooldowns.indices.contains(index) ? SettingsPatch(addCooldownSeconds: Self.cooldowns[index].value) : nil
        case .maxQueued:
            let value = settings.maxQueuedPerMember + step
            return (1...SessionSettings.queueLimit).contains(value) ? SettingsPatch(maxQueuedPerMember: value) : nil
        case .maxMembers:
            let value = settings.maxMembers + step
            return (1...SessionSettings.memberLimit).contains(value) ? SettingsPatch(maxMembers: value) : nil
        }
    }

    /// The index of the value closest to `value`, so a setting made elsewhere still shows.
    static func closest(_ values: [Double], _ value: Double) -> Int {
        values.indices.min { abs(values[$0] - value) < abs(values[$1] - value) } ?? 0
    }
}
