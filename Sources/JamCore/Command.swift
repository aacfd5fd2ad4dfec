import JamProtocol

/// Everything that can change a session, already authenticated as coming from one user.
public enum Command: Hashable, Sendable, Codable {
    /// Become a member (or update the display name when already one).
    case join(displayName: String)
    /// Stop being a member.
    case leave
    /// A realtime connection of the member opened.
    case connect
    /// A realtime connection of the member closed.
    case disconnect
    /// Add a track; `itemId` is minted by the caller so the domain stays deterministic.
    case add(track: Track, nonce: String, itemId: ItemID)
    /// Remove a queued item (its adder or a host).
    case remove(itemId: ItemID)
    /// Vote +1/-1, or 0 to clear.
    case vote(itemId: ItemID, value: Int)
    /// Host skip: the current item ends now.
    case skip
    /// A member asks to skip the current item.
    case requestSkip
    /// A member takes back their request to skip the current item.
    case withdrawSkipRequest
    /// The host's device played the current item to its end (host-device sessions); the
    /// next one starts. Nothing current: nothing happens, so a repeated finish is harmless.
    case finish
    /// Start the queue (or resume when paused).
    case play
    /// Hold the timeline.
    case pause
    /// Continue from where it was held.
    case resume
    /// Move the current item to a position.
    case seek(positionMs: Int64)
    /// The member's device has loaded the item of `epoch`.
    case ready(epoch: Int64)
    /// The member's device reports its sync quality (its round trip sets the lead).
    case syncReport(SyncReport)
    /// Change settings.
    case updateSettings(SettingsPatch)
    /// Change a member's role (host only).
    case setRole(userId: UserID, role: Role)
    /// Remove a member and keep them out (host only).
    case kick(userId: UserID)
    /// Set a device's delay: the member's own, or any member's by a host or co-host.
    case setDeviceDelay(DeviceDelay)
    /// Replace the join code (host only); the caller makes it unique.
    case setJoinCode(String)
    /// End the session for everyone (host only).
    case end
    /// The DJ makes `track` current, not yet playing (DJ-driven sessions).
    case djPrepare(track: Track, itemId: ItemID)
    /// The DJ moves the timeline (DJ-driven sessions).
    case djTimeline(DJTimeline)
    /// Several commands that succeed or fail together.
    indirect case all([Command])
    /// `command` (a host's skip, seek, pause or resume, a member's skip request or its withdrawal) only while the item of
    /// `epoch` is current: one sent before a reconnect and applied after must not act on the
    /// song that plays by then. It is logged as it came, and a node that forwards it to the
    /// session's owner forwards the check.
    indirect case whileCurrent(epoch: Int64, command: Command)
}

extension Command {
    /// This command, checked against the item of `epoch` (`whileCurrent`) when its sender
    /// named one; as it is when not.
    public func checked(whileCurrent epoch: Int64?) -> Command {
        epoch.map { .whileCurrent(epoch: $0, command: self) } ?? self
    }

    /// The command as a logged record replays it: without the checks of `whileCurrent`. A
    /// logged command was applied, so its check held then; and a record an older owner logged
    /// without checking (a member's skip request, in a cluster part upgraded) must replay as it
    /// was applied, not refuse the session it belongs to.
    public var asLogged: Command {
        switch self {
        case .whileCurrent(_, let command): command.asLogged
        case .all(let commands): .all(commands.map(\.asLogged))
        case .join, .leave, .connect, .disconnect, .add, .remove, .vote, .skip, .requestSkip, .withdrawSkipRequest, .finish, .play, .pause,
            .resume, .seek, .ready, .syncReport, .updateSettings, .setRole, .kick, .setDeviceDelay, .setJoinCode, .end, .djPrepare, .djTimeline:
            self
        }
    }

    /// Whether it can change its sender's own choices: their votes or their skip request, which
    /// the broadcasts do not attribute (`MyChoices` tells the sender's other devices).
    public var changesOwnChoices: Bool {
        switch self {
        case .vote, .requestSkip, .withdrawSkipRequest: true
        case .whileCurrent(_, let command): command.changesOwnChoices
        case .all(let commands): commands.contains(where: \.changesOwnChoices)
        case .join, .leave, .connect, .disconnect, .add, .remove, .skip, .finish, .play, .pause, .resume, .seek, .ready, .syncReport,
            .updateSettings, .setRole, .kick, .setDeviceDelay, .setJoinCode, .end, .djPrepare, .djTimeline:
            false
        }
    }
}

/// What a command produced.
public struct Outcome: Sendable, Equatable {
    /// Events to broadcast, in order, each with its `seq`.
    public var events: [ServerEnvelope] = []
    /// The item an add created (or had created, for a repeated nonce).
    public var itemId: ItemID?
    /// The voted item's score.
    public var score: Int?

    /// Creates an empty outcome.
    public init() {}
}
