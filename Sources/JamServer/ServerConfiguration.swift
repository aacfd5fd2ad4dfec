import Foundation
import JamCore
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
    /// Log level of the server's logger.
    public var logLevel: Logger.Level
    /// Start lead, prepare-ahead and commit margin of every session.
    public var timing: Timing
    /// Largest REST body accepted, in bytes.
    public var maxBodyBytes: Int
    /// Largest realtime frame accepted, in bytes.
    public var maxFrameBytes: Int
    /// Frames a connection may have waiting before it counts as stalled and is closed (4429).
    public var outboxLimit: Int
    /// Broadcast events kept per session for `hello {lastSeq}` resume.
    public var replayLogLimit: Int
    /// Rate limits; `nil` disables them (benchmarks).
    public var rateLimits: RateLimits?
    /// Which protocol the server speaks.
    public var profile: ServerProfile
    /// Limits and timings of the PirateRadio profile.
    public var pirateRadio: PirateRadioOptions
    /// Music folders; none means the built-in demo library (synthesised into the data folder).
    public var musicFolders: [URL] = []
    /// How often the music folders are rescanned while the server runs; 0 never.
    public var libraryRescanSeconds = 300
    /// The web client's folder; nil serves the client bundled with the server.
    public var webRoot: URL?

    /// Creates a configuration; the defaults are what `jam serve` uses.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: URL = ServerConfiguration.defaultDataDirectory,
        secret: String? = nil, logLevel: Logger.Level = .info, timing: Timing = Timing(),
        maxBodyBytes: Int = 64 * 1024, maxFrameBytes: Int = 64 * 1024, outboxLimit: Int = 512, replayLogLimit: Int = 1024,
        rateLimits: RateLimits? = RateLimits(), profile: ServerProfile = .openJam, pirateRadio: PirateRadioOptions = PirateRadioOptions()
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
        self.profile = profile
        self.pirateRadio = pirateRadio
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
    /// Join attempts per client address (guessing codes).
    public var join: (count: Int, window: Int)

    /// Creates limits; the defaults suit a party, not a brute-force attempt.
    public init(guestAuth: (Int, Int) = (30, 60), createSession: (Int, Int) = (20, 3600), join: (Int, Int) = (30, 60)) {
        self.guestAuth = guestAuth
        self.createSession = createSession
        self.join = join
    }
}

/// The protocol a server speaks.
public enum ServerProfile: String, Sendable, CaseIterable {
    /// OpenJam's own REST + realtime protocol.
    case openJam = "openjam"
    /// The PirateRadio app's protocol (see docs/PIRATE_RADIO.md). Its `/auth` trusts the
    /// client's user id, so it is never on by default.
    case pirateRadio = "pirate-radio"
}

/// Limits and timings of the PirateRadio profile; the defaults are its server's.
public struct PirateRadioOptions: Sendable {
    /// A socket that sends nothing for this long is closed with 4008.
    public var idleTimeoutMs: Int64 = 120_000
    /// How long a session with a track or a queue outlives its last socket.
    public var gracePeriodMs: Int64 = 300_000
    /// How long a join code admits people.
    public var codeLifetimeMs: Int64 = 3_600_000
    /// How long a token from `/auth` is valid.
    public var tokenLifetimeMs: Int64 = 24 * 3_600_000
    /// Members per session.
    public var maxMembers = 10
    /// Tracks in the queue.
    public var maxQueue = 100
    /// Sessions one user may create per window.
    public var createLimit: (count: Int, window: Int) = (5, 3600)
    /// Join attempts per client address per window.
    public var joinLimit: (count: Int, window: Int) = (10, 60)

    /// Creates the defaults.
    public init() {}
}
