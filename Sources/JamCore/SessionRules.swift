import JamProtocol

/// How a session behaves beyond its settings: fixed by the server profile that created it.
public struct SessionRules: Codable, Hashable, Sendable {
    /// Who starts items.
    public enum StartMode: String, Codable, Hashable, Sendable {
        /// The server announces starts ahead (`playPrepare` then `playCommit`), prepares the
        /// next item before the current one ends, and starts the first add at once.
        case scheduled
        /// The DJ's device sets the timeline (prepare, commit, pause, resume, seek); the server
        /// keeps it and advances to the queue head when an item ends.
        case djDriven
        /// The host's device plays (a foreign app with its own player): the first add becomes
        /// current at once, and an item ends only when the host says it finished or skips it,
        /// or enough members ask to skip. Every member counts for skip requests, socket or not.
        case hostDevice
    }

    /// How the `votes` order places items of equal score.
    public enum EqualScores: String, Codable, Hashable, Sendable {
        /// The item that has held its score longest first, then the earliest added (OpenJam's).
        case heldLongest
        /// Items that fell to the score (lost a vote) first, the latest fall first; then those
        /// that rose to it or never moved, the earliest first; then the earliest added (QueueIT's
        /// backend calls these tiers).
        case fallenFirst
    }

    /// What becomes of a member's skip request when they leave.
    public enum DepartedSkipRequests: String, Codable, Hashable, Sendable {
        /// It goes with them, and the requests left are checked against the smaller
        /// threshold at once (OpenJam's).
        case withdrawn
        /// It stays counted until the song changes, and is theirs again if they come back;
        /// nothing is checked until the next new request (QueueIT sessions stored before
        /// 2026-12-02).
        case kept
        /// As `kept`, and every request, a repeated one too, checks them: QueueIT's backend
        /// keeps the row, and counts and compares at each call. A member dropped for being
        /// away keeps theirs too.
        case keptCheckedAtEveryRequest

        /// Whether a member who leaves keeps their request (and leaving checks nothing).
        public var keepsLeaversRequests: Bool {
            switch self {
            case .withdrawn: false
            case .kept, .keptCheckedAtEveryRequest: true
            }
        }

        /// Whether a member dropped for being away keeps their request (and the drop checks
        /// nothing). Not for `kept`: its sessions' stored commands replay as they were applied.
        public var keepsAwayMembersRequests: Bool {
            switch self {
            case .withdrawn, .kept: false
            case .keptCheckedAtEveryRequest: true
            }
        }

        /// Whether a member's repeated request checks the requests against the threshold.
        public var checksRepeatedRequests: Bool {
            switch self {
            case .withdrawn, .kept: false
            case .keptCheckedAtEveryRequest: true
            }
        }
    }

    /// Who hosts a session whose host left it empty, when somebody arrives.
    public enum HostOfEmptySession: String, Codable, Hashable, Sendable {
        /// The first to arrive takes over (OpenJam's: a session is never without a host).
        case firstToArrive
        /// The host stays host while away and has the role again on coming back; others
        /// arrive as members (PirateRadio's server keeps its `djUserId`).
        case kept
    }

    /// Whom the host role passes to when the host leaves.
    public enum HostSuccession: String, Codable, Hashable, Sendable {
        /// The creator, else the longest-present member, among the connected members when any
        /// is: a member away from the session could not skip or pause for the others (OpenJam's).
        case connectedFirst
        /// The creator, else the longest-present member, connected or not (PirateRadio's
        /// server, whose members are present or gone; sessions stored before).
        case anyMember
        /// Nobody: the host stays host while away and has the role again on coming back
        /// (QueueIT's backend never changes a session's `host_id`). Goes with
        /// `HostOfEmptySession.kept`, so nobody arriving meanwhile takes it either.
        case nobody
    }

    /// Who starts items.
    public var startMode: StartMode
    /// Most items the queue holds; `nil` for no limit.
    public var maxQueueLength: Int?
    /// How long a session with something current or queued outlives its last member;
    /// `nil` ends it when the last member leaves.
    public var emptyGraceMs: Int64?

    /// Whether a track needs a non-empty `id` and `name`; PirateRadio's server requires
    /// neither, so its profile turns this off. Length and character limits apply either way.
    public var tracksNeedIdAndName: Bool
    /// Whether a repeated nonce is a retry only while its item is still queued; once it has
    /// left the queue the same nonce adds again (PirateRadio's server checks only its queue).
    /// Otherwise a remembered nonce is a retry for as long as it is remembered.
    public var noncesRepeatOnlyWhileQueued: Bool
    /// How the `votes` order places items of equal score.
    public var equalScores: EqualScores
    /// What becomes of a member's skip request when they leave.
    public var departedSkipRequests: DepartedSkipRequests
    /// Who hosts a session whose host left it empty, when somebody arrives.
    public var hostOfEmptySession: HostOfEmptySession
    /// Whether a member's add takes the place of a library-shuffle item already announced up
    /// next (while it plays and devices have time to load it). Off for sessions stored before
    /// the rule existed, so their stored commands replay as they were applied.
    public var addsReplaceAnnouncedFallback: Bool
    /// Whom the host role passes to when the host leaves (`anyMember` for sessions stored
    /// before the rule existed, so their stored commands replay as they were applied).
    public var hostSuccession: HostSuccession
    /// Whether a member's add cooldown keeps running while they leave and join again. Off for
    /// sessions stored before the rule existed, so their stored adds replay as they were applied.
    public var cooldownOutlivesLeaving: Bool
    /// Whether the start lead counts each of a member's devices (the slowest that reported in
    /// the last `SessionState.roundTripFreshMs`) rather than the member's latest report, so a
    /// phone on mobile data is not led for by the same member's laptop. Off for sessions stored
    /// before the rule existed, so their stored reports replay as they were applied.
    public var roundTripsPerDevice: Bool
    /// Whether names and track texts are held to `Validate.maxBytesPerCharacter` bytes for
    /// each character of their limits. Off for sessions stored before the rule existed, so
    /// their stored joins and adds replay as they were applied.
    public var capsTextBytes: Bool
    /// Whether a joining member's name may not hold a character that turns the direction of
    /// text, nor be made only of characters that show nothing (`Validate.displayName`). Always, for every session, as it keeps one member from
    /// passing for another: off only while a logged join replays (`SessionState.applyLogged`),
    /// as it was applied. Not stored.
    public var refusesMisleadingNames: Bool

    /// Creates rules.
    public init(
        startMode: StartMode, maxQueueLength: Int? = nil, emptyGraceMs: Int64? = nil, tracksNeedIdAndName: Bool = true,
        noncesRepeatOnlyWhileQueued: Bool = false, equalScores: EqualScores = .heldLongest,
        departedSkipRequests: DepartedSkipRequests = .withdrawn, hostOfEmptySession: HostOfEmptySession = .firstToArrive,
        addsReplaceAnnouncedFallback: Bool = true, hostSuccession: HostSuccession = .connectedFirst, cooldownOutlivesLeaving: Bool = true,
        roundTripsPerDevice: Bool = true, capsTextBytes: Bool = true, refusesMisleadingNames: Bool = true
    ) {
        self.startMode = startMode
        self.maxQueueLength = maxQueueLength
        self.emptyGraceMs = emptyGraceMs
        self.tracksNeedIdAndName = tracksNeedIdAndName
        self.noncesRepeatOnlyWhileQueued = noncesRepeatOnlyWhileQueued
        self.equalScores = equalScores
        self.departedSkipRequests = departedSkipRequests
        self.hostOfEmptySession = hostOfEmptySession
        self.addsReplaceAnnouncedFallback = addsReplaceAnnouncedFallback
        self.hostSuccession = hostSuccession
        self.cooldownOutlivesLeaving = cooldownOutlivesLeaving
        self.roundTripsPerDevice = roundTripsPerDevice
        self.capsTextBytes = capsTextBytes
        self.refusesMisleadingNames = refusesMisleadingNames
    }

    private enum CodingKeys: String, CodingKey {
        case startMode, maxQueueLength, emptyGraceMs, tracksNeedIdAndName, noncesRepeatOnlyWhileQueued, equalScores
        case departedSkipRequests, hostOfEmptySession, addsReplaceAnnouncedFallback, hostSuccession, cooldownOutlivesLeaving
        case roundTripsPerDevice, capsTextBytes
    }

    /// Reads rules; sessions stored before the newer rules existed keep OpenJam's defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        startMode = try c.decode(StartMode.self, forKey: .startMode)
        maxQueueLength = try c.decodeIfPresent(Int.self, forKey: .maxQueueLength)
        emptyGraceMs = try c.decodeIfPresent(Int64.self, forKey: .emptyGraceMs)
        tracksNeedIdAndName = try c.decodeIfPresent(Bool.self, forKey: .tracksNeedIdAndName) ?? true
        noncesRepeatOnlyWhileQueued = try c.decodeIfPresent(Bool.self, forKey: .noncesRepeatOnlyWhileQueued) ?? false
        equalScores = try c.decodeIfPresent(EqualScores.self, forKey: .equalScores) ?? .heldLongest
        departedSkipRequests = try c.decodeIfPresent(DepartedSkipRequests.self, forKey: .departedSkipRequests) ?? .withdrawn
        hostOfEmptySession = try c.decodeIfPresent(HostOfEmptySession.self, forKey: .hostOfEmptySession) ?? .firstToArrive
        addsReplaceAnnouncedFallback = try c.decodeIfPresent(Bool.self, forKey: .addsReplaceAnnouncedFallback) ?? false
        hostSuccession = try c.decodeIfPresent(HostSuccession.self, forKey: .hostSuccession) ?? .anyMember
        cooldownOutlivesLeaving = try c.decodeIfPresent(Bool.self, forKey: .cooldownOutlivesLeaving) ?? false
        roundTripsPerDevice = try c.decodeIfPresent(Bool.self, forKey: .roundTripsPerDevice) ?? false
        capsTextBytes = try c.decodeIfPresent(Bool.self, forKey: .capsTextBytes) ?? false
        refusesMisleadingNames = true
    }

    /// OpenJam's own rules: hosts may add past `maxQueuedPerMember`, but no queue holds more
    /// than 1,000 items, or one free guest sign-in could grow a session's memory, snapshots
    /// and every member's `stateSync` without end. Sessions stored before the limit keep none.
    public static let openJam = SessionRules(startMode: .scheduled, maxQueueLength: 1000)
}

/// A timeline change the DJ's device decided, with the server instant it refers to.
public enum DJTimeline: Hashable, Sendable, Codable {
    /// The prepared item plays from `positionMs` at `at`.
    case commit(positionMs: Int64, at: Millis)
    /// Held at `positionMs` from `at`.
    case pause(positionMs: Int64, at: Millis)
    /// Plays from `positionMs` at `at`.
    case resume(positionMs: Int64, at: Millis)
    /// Moves to `positionMs` at `at`, playing or not.
    case seek(positionMs: Int64, at: Millis)
}
