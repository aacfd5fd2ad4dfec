import ArgumentParser
import Foundation
import JamMedia
import JamPirateRadio
import JamQueueIT
import JamServer
import Logging
import Metrics
import Prometheus
import ServiceLifecycle

/// `jam serve`: runs the server with an embedded SQLite store.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the OpenJam server.",
        discussion: """
            Every option can also be set with an environment variable: JAM_HOST, JAM_PORT,
            JAM_DATA_DIR, JAM_SECRET, JAM_LOG_LEVEL, JAM_PROFILE, JAM_DATABASE_URL. Options win over
            the environment.

            A session nobody is connected to pauses after 15 minutes and ends after 24 hours
            (--pause-unattended-minutes, --end-abandoned-hours; 0 turns either off); an ended
            session's data is removed 7 days later (--purge-ended-days; 0 keeps it).

            --database postgres://user:password@host:5432/database keeps sessions in PostgreSQL
            instead of the SQLite file in the data folder; several nodes sharing one database
            (and one JAM_SECRET) serve the same sessions (docs/SEVERAL_NODES.md).

            --profile pirate-radio speaks the PirateRadio app's protocol (docs/PIRATE_RADIO.md)
            and also reads PORT and JWT_SECRET like that app's server. Its sign-in trusts the
            user id a client sends, so it is off unless asked for.

            --profile queueit speaks the QueueIT app's REST API and socket (docs/QUEUEIT.md);
            OpenJam's guest tokens stand in for its Supabase sign-in, and the host's phone
            plays, so it too is off unless asked for.
            """
    )

    @Option(help: "Address to listen on (JAM_HOST).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (JAM_PORT).")
    var port: Int?

    @Option(name: .customLong("data-dir"), help: "Folder for the database and the token secret (JAM_DATA_DIR).")
    var dataDir: String?

    @Option(help: "Token signing secret; generated and kept in the data folder when absent (JAM_SECRET).")
    var secret: String?

    @Option(help: "Keep sessions in PostgreSQL: postgres://user:password@host:5432/database (JAM_DATABASE_URL). Default: SQLite in the data folder.")
    var database: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (JAM_LOG_LEVEL).")
    var logLevel: String?

    @Option(help: "The protocol to speak; openjam unless set (JAM_PROFILE).")
    var profile: ProfileName?

    @Option(name: .customLong("music"), help: "A music folder; repeat for more (JAM_MUSIC, ':'-separated). Without one, a built-in demo library plays.")
    var music: [String] = []

    @Option(name: .customLong("rescan-seconds"), help: "Rescan the music folders this often while running; 0 never (JAM_RESCAN_SECONDS, default 300).")
    var rescanSeconds: Int?

    @Option(name: .customLong("web-root"), help: "Serve the web client from this folder instead of the bundled one (JAM_WEB_ROOT; for working on the client).")
    var webRoot: String?

    @Option(
        name: .customLong("pause-unattended-minutes"),
        help: "Pause a session's playback once no member has been connected this long; 0 never (JAM_PAUSE_UNATTENDED_MINUTES, default 15).")
    var pauseUnattendedMinutes: Int?

    @Option(
        name: .customLong("end-abandoned-hours"),
        help: "End a session once no member has been connected this long; 0 never (JAM_END_ABANDONED_HOURS, default 24).")
    var endAbandonedHours: Int?

    @Option(
        name: .customLong("drop-away-hours"),
        help: "A member with no socket who sent nothing this long leaves the session while others are there; 0 never (JAM_DROP_AWAY_HOURS, default 12).")
    var dropAwayHours: Int?

    @Option(
        name: .customLong("purge-ended-days"),
        help: "Remove an ended session's data this many days after it ended; 0 keeps it (JAM_PURGE_ENDED_DAYS, default 7).")
    var purgeEndedDays: Int?

    @Option(
        name: .customLong("token-hours"),
        help: "How long a guest token is valid; clients refresh theirs before then (JAM_TOKEN_HOURS, 1 to 8760, default 720).")
    var tokenHours: Int?

    @Option(
        name: .customLong("stop-timeout-seconds"),
        help: "How long a graceful stop may take before the server's work is cancelled; half as long again and the process is stopped with a crash report (JAM_STOP_TIMEOUT_SECONDS, 1 to 3600, default 30).")
    var stopTimeoutSeconds: Int?

    @Option(
        name: .customLong("max-sockets-per-address"),
        help: "Most realtime sockets one client address may hold open; 0 for no cap (JAM_MAX_SOCKETS_PER_ADDRESS, default 256).")
    var maxSocketsPerAddress: Int?

    @Option(
        name: .customLong("max-connections-per-address"),
        help: "Most TCP connections (HTTP and realtime) one client address may hold open; more are closed at once; 0 for no cap. A trusted proxy's connections are not counted (JAM_MAX_CONNECTIONS_PER_ADDRESS; default 8 × the socket cap and at least 2048, no cap when sockets have none).")
    var maxConnectionsPerAddress: Int?

    @Option(
        name: .customLong("trusted-proxy"),
        help: "A proxy in front of this server (its IP address; repeat for several): behind it, per-address limits count the client its X-Forwarded-For names (JAM_TRUSTED_PROXIES, comma-separated).")
    var trustedProxy: [String] = []

    @Option(name: .customLong("idle-timeout-ms"), help: "pirate-radio: close a session's sockets when all were silent this long (JAM_PR_IDLE_TIMEOUT_MS, default 1800000).")
    var idleTimeoutMs: Int64?

    @Option(name: .customLong("grace-period-ms"), help: "pirate-radio: how long an emptied session with music lives on (JAM_PR_GRACE_PERIOD_MS, default 300000).")
    var gracePeriodMs: Int64?

    @Option(
        name: .customLong("sweep-interval-ms"),
        help: "pirate-radio: how often members without a socket are looked for; one without at two sweeps running leaves (JAM_PR_SWEEP_INTERVAL_MS, default 15000).")
    var sweepIntervalMs: Int64?

    @Option(
        name: .customLong("ping-interval-ms"),
        help: "pirate-radio: how often every socket is pinged; one that answered nothing by the next ping is closed and its member leaves (JAM_PR_PING_INTERVAL_MS, default 15000).")
    var pingIntervalMs: Int64?

    @Option(name: .customLong("code-lifetime-ms"), help: "pirate-radio: how long a join code admits people (JAM_PR_CODE_LIFETIME_MS, default 3600000).")
    var codeLifetimeMs: Int64?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var configuration = ServerConfiguration()
        let profileName = try ProfileName.chosen(profile, environment: environment)
        let pirate = profileName.listensLikePirateRadio
        try refuseOptionsOtherProfilesRead(profileName)
        if pirate {
            // Like PirateRadio's own server: every interface, port 3000 unless PORT says otherwise.
            configuration.host = "0.0.0.0"
            configuration.port = 3000
        }
        configuration.host = host ?? environment["JAM_HOST"] ?? configuration.host
        let portVariable = pirate && environment["PORT"] != nil ? "PORT" : "JAM_PORT"
        var portSource = "the port"
        if let value = port {
            configuration.port = value
            portSource = "--port"
        } else if let portText = environment[portVariable] {
            guard let value = Int(portText) else { throw ValidationError("\(portVariable) must be a number, got \"\(portText)\"") }
            configuration.port = value
            portSource = portVariable
        }
        guard (0...65535).contains(configuration.port) else { throw ValidationError("\(portSource) must be between 0 and 65535, got \(configuration.port)") }
        guard !configuration.host.isEmpty else { throw ValidationError("the address to listen on (--host, JAM_HOST) is empty") }
        configuration.secret = try chosenSecret(environment: environment, pirate: pirate)
        if let url = database ?? environment["JAM_DATABASE_URL"], !url.isEmpty {
            do {
                configuration.database = try PostgresLocation(url: url)
            } catch {
                throw ValidationError(error.message)
            }
        }
        if let level = logLevel ?? environment["JAM_LOG_LEVEL"] {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ValidationError("unknown log level \"\(level)\"; use trace, debug, info, notice, warning, error or critical")
            }
            configuration.logLevel = parsed
        }
        // JAM_MUSIC and JAM_WEB_ROOT may be set for another profile on the same machine: only
        // a profile that reads them checks them.
        let readsLibrary = profileName != .pirateRadio
        let folders = !readsLibrary ? [] : music.isEmpty ? (environment["JAM_MUSIC"].map { $0.split(separator: ":").map(String.init) } ?? []) : music
        for folder in folders {
            if let problem = MusicLibrary.folderProblem(folder) { throw ValidationError("music folder \"\(folder)\" \(problem)") }
        }
        configuration.musicFolders = folders.map { URL(fileURLWithPath: $0) }
        if readsLibrary, let seconds = try rescanInterval(environment: environment, hasFolders: !folders.isEmpty) {
            configuration.libraryRescanSeconds = seconds
        }
        if profileName == .openjam, let root = webRoot ?? environment["JAM_WEB_ROOT"] {
            guard FileManager.default.fileExists(atPath: URL(fileURLWithPath: root).appendingPathComponent("index.html").path) else {
                throw ValidationError("web root \"\(root)\" has no index.html")
            }
            configuration.webRoot = URL(fileURLWithPath: root)
        }
        if let minutes = try count(pauseUnattendedMinutes, "JAM_PAUSE_UNATTENDED_MINUTES", "--pause-unattended-minutes", upTo: 525_600) {
            configuration.timing.unattendedPauseMs = minutes == 0 ? nil : Int64(minutes) * 60_000
        }
        if let hours = try count(endAbandonedHours, "JAM_END_ABANDONED_HOURS", "--end-abandoned-hours") {
            configuration.timing.abandonAfterMs = hours == 0 ? nil : Int64(hours) * 3_600_000
        }
        if let hours = try count(dropAwayHours, "JAM_DROP_AWAY_HOURS", "--drop-away-hours") {
            configuration.timing.dropAwayMs = hours == 0 ? nil : Int64(hours) * 3_600_000
        }
        if let days = try count(purgeEndedDays, "JAM_PURGE_ENDED_DAYS", "--purge-ended-days") {
            configuration.endedRetentionMs = days == 0 ? nil : Int64(days) * 24 * 3_600_000
        }
        if let hours = try count(tokenHours, "JAM_TOKEN_HOURS", "--token-hours") {
            let name = tokenHours == nil ? "JAM_TOKEN_HOURS" : "--token-hours"
            guard hours > 0 else { throw ValidationError("\(name) must be 1 to 8760, got 0: a token must be valid for some time") }
            configuration.tokenLifetimeMs = Int64(hours) * 3_600_000
        }
        if let text = stopTimeoutSeconds.map(String.init) ?? environment["JAM_STOP_TIMEOUT_SECONDS"] {
            let source = stopTimeoutSeconds == nil ? "JAM_STOP_TIMEOUT_SECONDS" : "--stop-timeout-seconds"
            guard let value = Int(text), (1...3600).contains(value) else { throw ValidationError("\(source) must be 1 to 3600 seconds, got \"\(text)\"") }
            configuration.stopTimeout = .seconds(value)
        }
        if let text = maxSocketsPerAddress.map(String.init) ?? environment["JAM_MAX_SOCKETS_PER_ADDRESS"] {
            guard let value = Int(text), (0...1_000_000).contains(value) else {
                throw ValidationError("the socket cap per address must be 0 (no cap) to 1000000, got \"\(text)\"")
            }
            configuration.maxSocketsPerAddress = value == 0 ? nil : value
        }
        if let text = maxConnectionsPerAddress.map(String.init) ?? environment["JAM_MAX_CONNECTIONS_PER_ADDRESS"] {
            guard let value = Int(text), (0...1_000_000).contains(value) else {
                throw ValidationError("the connection cap per address must be 0 (no cap) to 1000000, got \"\(text)\"")
            }
            configuration.maxConnectionsPerAddress = value == 0 ? nil : value
        }
        // Every realtime socket is a connection: a lower connection cap would close sockets the
        // socket cap allows, without the socket cap's answer. (With no socket cap, the
        // connection cap still bounds an address's sockets.)
        if configuration.connectionCapIsChosen, let connections = configuration.maxConnectionsPerAddress,
            let sockets = configuration.maxSocketsPerAddress, connections < sockets
        {
            throw ValidationError(
                "the connection cap per address (\(connections)) is below the socket cap (\(sockets)), and every realtime socket is a connection: "
                    + "raise --max-connections-per-address (JAM_MAX_CONNECTIONS_PER_ADDRESS) or set it to 0")
        }
        let proxies = trustedProxy.isEmpty ? (environment["JAM_TRUSTED_PROXIES"] ?? "").split(separator: ",").map(String.init) : trustedProxy
        for proxy in proxies.map({ $0.trimmingCharacters(in: .whitespaces) }) where !proxy.isEmpty {
            // The socket reports its peer as an IP address, so only an address can match it.
            guard ClientAddresses.isAddress(proxy) else {
                throw ValidationError("a trusted proxy must be an IP address (as 127.0.0.1 or ::1), got \"\(proxy)\"")
            }
            configuration.trustedProxies.insert(proxy)
        }
        if let folder = try dataFolder(environment: environment) {
            configuration.dataDirectory = folder
        }
        switch profileName {
        case .openjam:
            configuration.profile = OpenJamProfile()
        case .pirateRadio:
            var options = PirateRadioOptions()
            options.idleTimeoutMs = try milliseconds(idleTimeoutMs, "JAM_PR_IDLE_TIMEOUT_MS", "--idle-timeout-ms") ?? options.idleTimeoutMs
            options.gracePeriodMs = try milliseconds(gracePeriodMs, "JAM_PR_GRACE_PERIOD_MS", "--grace-period-ms") ?? options.gracePeriodMs
            options.codeLifetimeMs = try milliseconds(codeLifetimeMs, "JAM_PR_CODE_LIFETIME_MS", "--code-lifetime-ms") ?? options.codeLifetimeMs
            options.sweepIntervalMs = try milliseconds(sweepIntervalMs, "JAM_PR_SWEEP_INTERVAL_MS", "--sweep-interval-ms") ?? options.sweepIntervalMs
            options.pingIntervalMs = try pingInterval() ?? options.pingIntervalMs
            configuration.profile = PirateRadioProfile(options: options)
        case .queueit:
            configuration.profile = QueueITProfile()
        }
        // Each profile also names itself for logs and the listening line; the two must agree.
        assert(configuration.profile.name == profileName.rawValue, "profile \(profileName.rawValue) calls itself \(configuration.profile.name)")
        if let text = environment["JAM_SOCKET_LIMITS"] {
            // Load tests send far faster than people; production keeps the limits.
            guard text == "off" || text == "on" else { throw ValidationError("JAM_SOCKET_LIMITS must be on or off, got \"\(text)\"") }
            if text == "off" { configuration.commandLimits = nil }
        }
        if let text = environment["JAM_RATE_LIMITS"] {
            // An API conformance run sends far more requests per address than people do.
            guard text == "off" || text == "on" else { throw ValidationError("JAM_RATE_LIMITS must be on or off, got \"\(text)\"") }
            if text == "off" { configuration.rateLimits = nil }
        }
        if let text = environment["JAM_COMMIT_LINGER_US"] {
            // A tuning knob for measuring, not an option people need.
            guard let value = Int64(text), value >= 0 else { throw ValidationError("JAM_COMMIT_LINGER_US must be a number of microseconds, got \"\(text)\"") }
            configuration.commitTiming.linger = .microseconds(value)
        }
        if let text = environment["JAM_FORWARD_WAIT_MS"] {
            // Several nodes over a slow database may want longer; tests want it short.
            guard let value = Int64(text), value > 0 else { throw ValidationError("JAM_FORWARD_WAIT_MS must be a positive number of milliseconds, got \"\(text)\"") }
            configuration.forwardAnswerMs = value
        }
        // Before anything uses the shared event loops (nothing above does).
        do {
            try EventLoops.configure(environment: environment, commitThread: configuration.database == nil)
        } catch {
            throw ValidationError(error.message)
        }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            var handler = OneLineLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory.openJam(registry: registry))

        let host = configuration.host
        let dataDirectory = configuration.database?.redacted ?? configuration.dataDirectory.path
        let shownProfile = configuration.profile.name
        let app = try await buildApplication(configuration, metrics: registry) { port in
            // Unbuffered, so scripts waiting for this line see it at once.
            // An IPv6 address goes in brackets, so the printed address is a URL scripts can use.
            let shownHost = host.contains(":") ? "[\(host)]" : host
            var lines = "OpenJam listening on http://\(shownHost):\(port)  (profile: \(shownProfile), data: \(dataDirectory))\n"
            for link in Self.linksForOtherDevices(host: host, port: port, addresses: Self.interfaceAddresses()) {
                lines += "  open it from other devices at \(link)\n"
            }
            FileHandle.standardOutput.write(Data(lines.utf8))
        }
        // A graceful stop waits for requests in progress, and one may wait on a store that
        // does not answer: after the stop timeout the work is cancelled, and should that hang
        // too, the service group stops the process with a fatalError (nothing acknowledged is
        // lost: a command is answered only once stored).
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "openjam"))
        group.maximumGracefulShutdownDuration = configuration.stopTimeout
        group.maximumCancellationDuration = max(.seconds(1), configuration.stopTimeout / 2)
        try await ServiceGroup(configuration: group).run()
    }
}
