import JamClient
import JamProtocol

/// The host's settings on the live screen: one row each, changed with ← and →.
enum SettingsRow: CaseIterable, Sendable {
    case locked, fallback, duplicates, ordering, threshold, cooldown, maxQueued, maxMembers

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
        case .threshold: "more than \(SettingsChoices.skipThresholds[SettingsChoices.skipThresholdIndex(settings.skipThreshold)].words) ask"
        case .cooldown: SettingsChoices.addCooldowns[SettingsChoices.addCooldownIndex(settings.addCooldownSeconds)].words
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
            let index = SettingsChoices.skipThresholdIndex(settings.skipThreshold) + step
            return SettingsChoices.skipThresholds.indices.contains(index) ? SettingsPatch(skipThreshold: SettingsChoices.skipThresholds[index].value) : nil
        case .cooldown:
            let index = SettingsChoices.addCooldownIndex(settings.addCooldownSeconds) + step
            return SettingsChoices.addCooldowns.indices.contains(index) ? SettingsPatch(addCooldownSeconds: SettingsChoices.addCooldowns[index].value) : nil
        case .maxQueued:
            let value = settings.maxQueuedPerMember + step
            return (1...SessionSettings.queueLimit).contains(value) ? SettingsPatch(maxQueuedPerMember: value) : nil
        case .maxMembers:
            let value = settings.maxMembers + step
            return (1...SessionSettings.memberLimit).contains(value) ? SettingsPatch(maxMembers: value) : nil
        }
    }
}
