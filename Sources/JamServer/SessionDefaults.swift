import JamCore
import JamProtocol

/// What a server profile fixes for every session it creates: rules, limits, code format
/// and how the session speaks on the wire.
struct SessionDefaults: Sendable {
    let rules: SessionRules
    let settings: SessionSettings
    let codes: JoinCodes
    /// How long a join code admits people; `nil` for as long as the session lives.
    let codeLifetimeMs: Int64?
    let makeWire: @Sendable (_ epoch: Int64) -> any SessionWire

    /// OpenJam's own sessions.
    static let openJam = SessionDefaults(
        rules: .openJam, settings: SessionSettings(), codes: .openJam, codeLifetimeMs: nil,
        makeWire: { _ in OpenJamWire() })

    /// PirateRadio's sessions: DJ-driven, 10 members, 100 queued, 4-digit codes.
    static func pirateRadio(_ options: PirateRadioOptions) -> SessionDefaults {
        SessionDefaults(
            rules: SessionRules(startMode: .djDriven, maxQueueLength: options.maxQueue, emptyGraceMs: options.gracePeriodMs),
            settings: SessionSettings(maxMembers: options.maxMembers, maxQueuedPerMember: options.maxQueue, allowDuplicates: true),
            codes: .pirateRadio, codeLifetimeMs: options.codeLifetimeMs,
            makeWire: { epoch in PirateRadioWire(epoch: epoch) })
    }
}
