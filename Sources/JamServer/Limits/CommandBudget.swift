import JamCore
import JamProtocol

/// How fast one member may send each kind of socket message: a token bucket per kind, as
/// "a burst of `capacity`, then `perSecond`". Generous for people, tight for scripts.
public struct CommandLimits: Sendable, Equatable {
    /// A bucket's size and refill.
    public struct Rate: Sendable, Equatable {
        /// Messages that may arrive at once.
        public var capacity: Double
        /// Messages per second after the burst.
        public var perSecond: Double

        /// Creates a rate.
        public init(capacity: Double, perSecond: Double) {
            self.capacity = capacity
            self.perSecond = perSecond
        }
    }

    /// Adds: a handful at once, then one every two seconds.
    public var add = Rate(capacity: 10, perSecond: 0.5)
    /// Votes (and clearing them).
    public var vote = Rate(capacity: 30, perSecond: 2)
    /// Skip requests.
    public var skipRequest = Rate(capacity: 5, perSecond: 0.2)
    /// Clock pings, per device (socket), as each device keeps its own clock: a first burst
    /// of 48, then 24 every 7.5 s for two minutes (3.2/s) and every 15 s after (1.6/s).
    public var ping = Rate(capacity: 60, perSecond: 4)
    /// Everything else (reports, readiness, host controls, settings).
    public var other = Rate(capacity: 120, perSecond: 20)

    /// Creates limits; the defaults suit a party.
    public init() {}

    /// The rate for messages of `kind`.
    func rate(_ kind: CommandBudget.Kind) -> Rate {
        switch kind {
        case .add: add
        case .vote: vote
        case .skipRequest: skipRequest
        case .ping: ping
        case .other: other
        }
    }
}

/// The token buckets of one session's members, as a value: the session asks before it
/// applies a socket message and refuses it with the wait the bucket needs.
struct CommandBudget {
    /// What a message counts against.
    enum Kind: Hashable, CaseIterable {
        case add, vote, skipRequest, ping, other

        /// The bucket a command draws from; a batch draws from each of its parts'.
        static func of(_ command: Command) -> [Kind] {
            switch command {
            case .add: [.add]
            case .vote: [.vote]
            // Taking a request back spends as asking does, so toggling cannot flood members.
            case .requestSkip, .withdrawSkipRequest: [.skipRequest]
            case .all(let commands): commands.flatMap(of)
            case .whileCurrent(_, let command): of(command)
            case .join, .leave, .connect, .disconnect, .remove, .skip, .play, .pause, .resume, .seek, .ready, .syncReport,
                .updateSettings, .setRole, .kick, .setDeviceDelay, .setJoinCode, .djPrepare, .djTimeline, .end, .finish:
                [.other]
            }
        }
    }

    /// Whether a message may go ahead.
    enum Decision: Equatable {
        case allowed
        /// Refused: the bucket of that kind (the one that is shortest) has enough again after
        /// this many milliseconds.
        case refused(Kind, retryAfterMs: Int64)
    }

    private struct Key: Hashable {
        let user: UserID
        let kind: Kind
        /// The socket, for kinds budgeted per device; nil for the member's own buckets.
        let device: ConnectionID?
    }

    private struct Bucket {
        var tokens: Double
        var at: Millis
    }

    let limits: CommandLimits
    private var buckets: [Key: Bucket] = [:]
    private var spends = 0

    init(limits: CommandLimits) {
        self.limits = limits
    }

    /// Takes one token per kind in `kinds` from `user`'s buckets at `now` (for kinds budgeted
    /// per device, the bucket of the socket `device`), or none at all when any of them is
    /// short (a refused batch costs nothing). A batch bigger than a bucket (a host queueing a
    /// playlist at once) takes the whole bucket.
    mutating func spend(_ kinds: [Kind], by user: UserID, on device: ConnectionID? = nil, at now: Millis) -> Decision {
        var needed: [Kind: Double] = [:]
        for kind in kinds { needed[kind, default: 0] += 1 }
        for (kind, count) in needed { needed[kind] = min(count, limits.rate(kind).capacity) }
        var refilled: [Key: Bucket] = [:]
        var wait: Int64 = 0
        var short = Kind.other
        for (kind, count) in needed {
            let rate = limits.rate(kind)
            let key = Key(user: user, kind: kind, device: kind.perDevice ? device : nil)
            var bucket = buckets[key] ?? Bucket(tokens: rate.capacity, at: now)
            let elapsed = Double(max(0, now - bucket.at)) / 1000
            bucket.tokens = min(rate.capacity, bucket.tokens + elapsed * rate.perSecond)
            bucket.at = now
            if bucket.tokens < count {
                let needs = Int64(((count - bucket.tokens) / rate.perSecond * 1000).rounded(.up))
                if needs >= wait { (wait, short) = (needs, kind) }
            }
            refilled[key] = bucket
        }
        spends += 1
        if spends % 1_024 == 0 { prune(at: now) }
        // Refilled up to now either way: a wall clock set back would otherwise leave an empty
        // bucket refilling from an instant still to come, refused for the whole jump.
        let allowed = wait == 0
        for (key, var bucket) in refilled {
            if allowed { bucket.tokens -= needed[key.kind] ?? 0 }
            buckets[key] = bucket
        }
        return allowed ? .allowed : .refused(short, retryAfterMs: max(1, wait))
    }

    /// Forgets the buckets that are full again by `now`, so the table holds only members
    /// who sent something lately.
    mutating func prune(at now: Millis) {
        buckets = buckets.filter { key, bucket in
            let rate = limits.rate(key.kind)
            return bucket.tokens + Double(max(0, now - bucket.at)) / 1000 * rate.perSecond < rate.capacity
        }
    }

    /// Buckets held (tests).
    var count: Int { buckets.count }
}

extension CommandBudget.Kind {
    /// Whether each of a member's devices has a bucket of its own: clock pings, which every
    /// listening device sends for itself.
    var perDevice: Bool {
        switch self {
        case .ping: true
        case .add, .vote, .skipRequest, .other: false
        }
    }

    /// How people read the kind in a refusal.
    var noun: String {
        switch self {
        case .add: "adds"
        case .vote: "votes"
        case .skipRequest: "skip requests"
        case .ping: "clock pings"
        case .other: "messages"
        }
    }
}
