import Foundation
import JamCore
import JamProtocol
import Logging

/// Everything `jam serve` and the tests can set about a server.
public struct ServerConfiguration: Sendable {
    /// Address to bind.
    public var host: String
    /// Port to bind; 0 picks a free one.
    public var port: Int
    /// Folder for the SQLite file and the generated secret.
    public var dataDirectory: URL
    /// Token signing secret; generated and stored in the data folder when absent.
    public var secret: String?
    /// Shortest secret the server signs with, given or read from the data folder.
    public static let minimumSecretLength = SecretStore.minimumLength
    /// Log level of the server's logger.
    public var logLevel: Logger.Level
    /// Start lead, prepare-ahead and commit margin of every session.
    public var timing: Timing
    /// Largest REST body accepted, in bytes.
    public var maxBodyBytes: Int
    /// Largest realtime message accepted, in bytes; nil for the profile's own (64 KiB, and
    /// 512,000 bytes for PirateRadio's, as its server takes).
    public var maxFrameBytes: Int?
    /// Frames a connection may be sent while its socket does not drain before it counts as
    /// stalled and is closed (4429).
    public var outboxLimit: Int
    /// Broadcast events kept per session for `hello {lastSeq}` resume.
    public var replayLogLimit: Int
    /// Rate limits; `nil` disables them (benchmarks).
    public var rateLimits: RateLimits?
    /// How fast each member may send socket messages (profiles whose original server had
    /// no such limit leave them off); `nil` disables them (benchmarks).
    public var commandLimits: CommandLimits? = CommandLimits()
    /// Which protocol the server speaks (OpenJam's own unless a foreign profile is chosen).
    package var profile: any WireProfile = OpenJamProfile()
    /// A session's snapshot is written after `replayLogLimit` events, or after this many log
    /// records when its records carry few events. Snapshots that far apart
    /// let a recovery regenerate the whole replay ring; each costs a write of the whole state
    /// and the pruning of the records before the one before it.
    public var snapshotEvery = 4_096
    /// How long a socket that does not drain may hold on before it is closed (4429).
    public var stallTimeoutMs: Int64 = 30_000
    /// Most realtime sockets one client address may hold open; nil for no cap.
    public var maxSocketsPerAddress: Int? = 256
    /// Most TCP connections (HTTP and realtime alike) one client address (an IPv6 client's
    /// /64) may hold open; nil for no cap. Trusted proxies are not counted: every client behind
    /// them shares their address. Unless set, `connectionsPerSocket` times the socket cap, and
    /// at least `minimumConnectionCap` (no cap when sockets have none): each member's browser
    /// holds its socket and up to six kept-alive HTTP connections, a party behind one router
    /// shares an address, and a small socket cap must not starve the page's own requests.
    public var maxConnectionsPerAddress: Int? {
        get {
            chosenConnectionCap
                ?? maxSocketsPerAddress.map { max(Self.minimumConnectionCap, $0.multipliedReportingOverflow(by: Self.connectionsPerSocket).partialValue) }
        }
        set { chosenConnectionCap = .some(newValue) }
    }
    /// The least connection cap that follows the socket cap (8 × the default 256 sockets).
    public static let minimumConnectionCap = 2_048
    /// The connection cap as set, when it was; nil: it follows the socket cap.
    private var chosenConnectionCap: Int??
    /// Connections per socket of the socket cap, for the connection cap that follows it.
    public static let connectionsPerSocket = 8
    /// Whether the connection cap was set rather than following the socket cap.
    public var connectionCapIsChosen: Bool { chosenConnectionCap != nil }
    /// Peers whose `X-Forwarded-For` names the client for per-address limits (a proxy in
    /// front of this server); empty: every peer is the client.
    public var trustedProxies: Set<String> = []
    /// Bytes of a session's resume frames kept in memory (besides `replayLogLimit` frames).
    public var replayLogBytes = 1 << 20
    /// How long a guest token is valid; members refresh theirs before it runs out.
    public var tokenLifetimeMs: Int64 = TokenSigner.defaultLifetimeMs
    /// A new connection's first request head must be in within this long, or it is closed
    /// (a client holding connections open by sending nothing, or its headers a byte at a time).
    public var headerTimeout: Duration = .seconds(10)
    /// A kept-alive HTTP connection with no request under way is closed after this long.
    public var httpIdleTimeout: Duration = .seconds(75)
    /// A request's body must be in within this long of its head, or the connection is closed
    /// (a client holding a connection open by sending its body a byte at a time).
    public var bodyTimeout: Duration = .seconds(30)
    /// Whether the SQLite store writes its write-ahead log out to full size when it opens, so
    /// that commits rewrite blocks rather than allocate them (tests that start many servers
    /// turn it off to spare the disk ~9 MiB a start).
    public var reserveStoreLog = true
    /// How often the store moves its write-ahead log into the database.
    public var checkpointInterval: Duration = .milliseconds(500)
    /// How group commits wait for company under load.
    public var commitTiming = CommitPipeline.Timing()
    /// How long a graceful stop (SIGTERM, SIGINT) may take before the server's tasks are
    /// cancelled; half as long again, and the process is stopped with a crash report. Nothing
    /// acknowledged is lost either way: a command is answered only once stored. `jam serve`
    /// applies it to the service group it runs; `buildApplication` alone does not.
    public var stopTimeout: Duration = .seconds(30)
    /// Music folders; none means the built-in demo library (synthesised into the data folder).
    public var musicFolders: [URL] = []
    /// How often the music folders are rescanned while the server runs; 0 never.
    public var libraryRescanSeconds = 300
    /// How long an ended session's rows stay in the store before they are purged (its link
    /// answers 410 until then, 404 after); `nil` keeps them for ever.
    public var endedRetentionMs: Int64? = 7 * 24 * 3_600_000
    /// How often the registry looks for sessions that ended while in memory, to let them go
    /// and schedule their purge.
    public var endedSweepMs: Int64 = 60_000
    /// On a node of several, how often it reads the database's index for sessions whose
    /// deadline has passed with no node serving them (their node stopped with nobody
    /// connected), so that their unattended rules and purges still run.
    public var deadlineScanMs: Int64 = 30_000
    /// On a node of several, how long it keeps following a session none of its sockets is in
    /// (applying each of its records) after the last one closed.
    public var idleReplicaMs: Int64 = 60_000
    /// On a node of several, how long a member's command sent on to the node that owns the
    /// session waits for its answer before the member hears it may still be applied.
    public var forwardAnswerMs: Int64 = 10_000
    /// The web client's folder; nil serves the client built into the server.
    public var webRoot: URL?
    /// A PostgreSQL database to keep sessions in (several nodes may share it); nil keeps them
    /// in the SQLite file in the data folder.
    public var database: PostgresLocation?

    /// Creates a configuration; the defaults are what `jam serve` uses.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL = ServerConfiguration.defaultDataDirectory,
        secret: String? = nil, logLevel: Logger.Level = .info, timing: Timing = Timing(),
        maxBodyBytes: Int = 64 * 1024, maxFrameBytes: Int? = nil, outboxLimit: Int = 512, replayLogLimit: Int = 1024,
        rateLimits: RateLimits? = RateLimits()
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.secret = secret
        self.logLevel = logLevel
        self.timing = timing
        self.maxBodyBytes = maxBodyBytes
        self.maxFrameBytes = maxFrameBytes
        self.outboxLimit = outboxLimit
        self.replayLogLimit = replayLogLimit
        self.rateLimits = rateLimits
    }

    /// `$XDG_DATA_HOME/openjam`, else `~/.local/share/openjam`.
    public static var defaultDataDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("openjam")
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share/openjam")
    }

    /// The SQLite file inside the data folder.
    public var databasePath: String { dataDirectory.appendingPathComponent("openjam.sqlite").path }
}

/// Request limits per caller, each as "at most `count` per `window` seconds".
public struct RateLimits: Sendable {
    /// Guest tokens per client address.
    public var guestAuth: (count: Int, window: Int)
    /// Sessions created per user.
    public var createSession: (count: Int, window: Int)
    /// Sessions created per client address: guest tokens are free, so the limit per user
    /// alone would let one address open sessions as fast as it signs in.
    public var createSessionPerAddress: (count: Int, window: Int)
    /// Join attempts per client address (guessing codes).
    public var join: (count: Int, window: Int)
    /// API requests per client address without a valid token (the web client's own files
    /// and the media below do not count).
    public var anonymous: (count: Int, window: Int)
    /// API requests per signed-in user, reads included, each realtime socket they open counting
    /// as one (a member's commands also draw from `CommandLimits`). A guest token takes one
    /// request to get, so without it one token could poll a session or the library search as
    /// fast as the server answers. The QueueIT profile counts it too: its backend allows each
    /// user 100 requests a minute on the routes without limits of their own.
    public var member: (count: Int, window: Int)
    /// Cover and audio requests per client address. They carry no token (an `<img>` or
    /// `<audio>` element cannot send one), and a party behind one router fetches every cover
    /// of its queue at once on each phone that joins: counted with the other anonymous
    /// requests, the party's covers and songs would use up that budget and fail.
    public var media: (count: Int, window: Int)

    /// Creates limits; the defaults suit a party, not a brute-force attempt.
    public init(
        guestAuth: (Int, Int) = (30, 60), createSession: (Int, Int) = (20, 3600), createSessionPerAddress: (Int, Int) = (60, 3600),
        join: (Int, Int) = (30, 60), anonymous: (Int, Int) = (600, 60), member: (Int, Int) = (1_200, 60),
        media: (Int, Int) = (6_000, 60)
    ) {
        self.guestAuth = guestAuth
        self.createSession = createSession
        self.createSessionPerAddress = createSessionPerAddress
        self.join = join
        self.anonymous = anonymous
        self.member = member
        self.media = media
    }
}
