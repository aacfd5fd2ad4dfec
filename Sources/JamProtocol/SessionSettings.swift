/// How the queue is ordered.
public enum QueueOrdering: String, Codable, Sendable, CaseIterable, WireEnum {
    /// Highest score first; ties go to the item that held its score longest, then the earliest added.
    case votes
    /// Members take turns; within a member's items, votes decide.
    case fair
}

/// Rules a host sets for the session.
public struct SessionSettings: Codable, Hashable, Sendable {
    /// Only hosts may add.
    public var locked: Bool
    /// Fraction of connected members that skip requests must exceed.
    public var skipThreshold: Double
    /// Most members the session admits.
    public var maxMembers: Int
    /// Most items one member may have waiting in the queue.
    public var maxQueuedPerMember: Int
    /// Whether a track already queued or playing may be added again.
    public var allowDuplicates: Bool
    /// Queue ordering.
    public var ordering: QueueOrdering
    /// Continue with a library shuffle when the queue runs dry.
    public var fallback: Bool
    /// A member (hosts and co-hosts aside) may add again only this long after their last
    /// add: one add per so many seconds; 0 for no wait.
    public var addCooldownSeconds: Int

    /// Creates settings; the defaults are the ones a new session gets.
    public init(
        locked: Bool = false, skipThreshold: Double = 0.5, maxMembers: Int = 50, maxQueuedPerMember: Int = 20,
        allowDuplicates: Bool = false, ordering: QueueOrdering = .votes, fallback: Bool = false, addCooldownSeconds: Int = 0
    ) {
        self.locked = locked
        self.skipThreshold = skipThreshold
        self.maxMembers = maxMembers
        self.maxQueuedPerMember = maxQueuedPerMember
        self.allowDuplicates = allowDuplicates
        self.ordering = ordering
        self.fallback = fallback
        self.addCooldownSeconds = addCooldownSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case locked, skipThreshold, maxMembers, maxQueuedPerMember, allowDuplicates, ordering, fallback, addCooldownSeconds
    }

    /// Reads settings; sessions stored before the add cooldown existed have none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        locked = try c.decode(Bool.self, forKey: .locked)
        skipThreshold = try c.decode(Double.self, forKey: .skipThreshold)
        maxMembers = try c.decode(Int.self, forKey: .maxMembers)
        maxQueuedPerMember = try c.decode(Int.self, forKey: .maxQueuedPerMember)
        allowDuplicates = try c.decode(Bool.self, forKey: .allowDuplicates)
        ordering = try c.decode(QueueOrdering.self, forKey: .ordering)
        fallback = try c.decode(Bool.self, forKey: .fallback)
        addCooldownSeconds = try c.decodeIfPresent(Int.self, forKey: .addCooldownSeconds) ?? 0
    }

    /// When `member` may add again: nil when they may now (no cooldown, host controls, no
    /// add yet); otherwise the server instant their cooldown ends, which may have passed.
    public func nextAddAt(for member: Member) -> Millis? {
        guard addCooldownSeconds > 0, !member.role.hasHostControls, let last = member.lastAddedAt else { return nil }
        return last + Int64(addCooldownSeconds) * 1000
    }

    /// Whether a member of `role` with `waiting` songs of their own in the queue may add
    /// another: `maxQueuedPerMember` holds members; hosts and co-hosts are not held to it.
    public func mayQueueAnother(waiting: Int, role: Role) -> Bool {
        waiting < maxQueuedPerMember || role.hasHostControls
    }

    /// Highest `maxMembers` a host may set.
    public static let memberLimit = 1000
    /// Highest `maxQueuedPerMember` a host may set.
    public static let queueLimit = 500
    /// Longest add cooldown a host may set: an hour.
    public static let cooldownLimit = 3600
}

/// A partial settings change; absent fields stay as they are.
public struct SettingsPatch: Codable, Hashable, Sendable {
    public var locked: Bool?
    public var skipThreshold: Double?
    public var maxMembers: Int?
    public var maxQueuedPerMember: Int?
    public var allowDuplicates: Bool?
    public var ordering: QueueOrdering?
    public var fallback: Bool?
    public var addCooldownSeconds: Int?

    /// Creates a patch.
    public init(
        locked: Bool? = nil, skipThreshold: Double? = nil, maxMembers: Int? = nil, maxQueuedPerMember: Int? = nil,
        allowDuplicates: Bool? = nil, ordering: QueueOrdering? = nil, fallback: Bool? = nil, addCooldownSeconds: Int? = nil
    ) {
        self.addCooldownSeconds = addCooldownSeconds
        self.locked = locked
        self.skipThreshold = skipThreshold
        self.maxMembers = maxMembers
        self.maxQueuedPerMember = maxQueuedPerMember
        self.allowDuplicates = allowDuplicates
        self.ordering = ordering
        self.fallback = fallback
    }

    /// True when the patch changes nothing.
    public var isEmpty: Bool { self == SettingsPatch() }

    /// Checks every present field against its allowed range.
    public func validate() throws(JamError) {
        if let skipThreshold, !(skipThreshold > 0 && skipThreshold <= 1) || skipThreshold.isNaN {
            throw JamError(.invalidField, "settings.skipThreshold must be above 0 and at most 1, got \(skipThreshold)")
        }
        if let maxMembers, !(1...SessionSettings.memberLimit).contains(maxMembers) {
            throw JamError(.invalidField, "settings.maxMembers must be between 1 and \(SessionSettings.memberLimit), got \(maxMembers)")
        }
        if let maxQueuedPerMember, !(1...SessionSettings.queueLimit).contains(maxQueuedPerMember) {
            throw JamError(.invalidField, "settings.maxQueuedPerMember must be between 1 and \(SessionSettings.queueLimit), got \(maxQueuedPerMember)")
        }
        if let addCooldownSeconds, !(0...SessionSettings.cooldownLimit).contains(addCooldownSeconds) {
            throw JamError(.invalidField, "settings.addCooldownSeconds must be between 0 and \(SessionSettings.cooldownLimit), got \(addCooldownSeconds)")
        }
    }

    /// Returns `settings` with the patch applied.
    public func applied(to settings: SessionSettings) -> SessionSettings {
        var result = settings
        if let locked { result.locked = locked }
        if let skipThreshold { result.skipThreshold = skipThreshold }
        if let maxMembers { result.maxMembers = maxMembers }
        if let maxQueuedPerMember { result.maxQueuedPerMember = maxQueuedPerMember }
        if let allowDuplicates { result.allowDuplicates = allowDuplicates }
        if let ordering { result.ordering = ordering }
        if let fallback { result.fallback = fallback }
        if let addCooldownSeconds { result.addCooldownSeconds = addCooldownSeconds }
        return result
    }
}
