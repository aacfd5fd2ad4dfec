import Foundation
import Hummingbird
import HummingbirdCore
import JamCore
import JamMedia
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle

/// Builds the OpenJam server: the same application for `jam serve` and for the tests.
///
/// - Parameters:
///   - configuration: addresses, data folder, profile, limits and timing.
///   - clock: server time (tests inject their own).
///   - ids: identifier minting (tests inject a deterministic one).
///   - metrics: the registry `/metrics` exports, when the process bootstrapped one.
///   - store: where sessions are kept; when nil, `configuration.database` or else the SQLite
///     file in the data folder.
///   - onServerRunning: called with the bound port once the server accepts connections.
///   - onRoutes: called with every REST route ("GET /api/v1/sessions/{id}") once they are
///     registered (a test holds them against the OpenAPI description).
public func buildApplication(
    _ configuration: ServerConfiguration,
    clock: any ServerClock = SystemClock(),
    ids: any IDGenerator = RandomIDGenerator(),
    metrics: PrometheusCollectorRegistry? = nil,
    store givenStore: (any SessionStore)? = nil,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
    onRoutes: ([String]) -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    var logger = Logger(label: "openjam")
    logger.logLevel = configuration.logLevel
    let profile = configuration.profile
    if metrics != nil { Metrics.createAll() }

    try FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
    if let given = configuration.secret, given.count < SecretStore.minimumLength {
        // Anybody who guesses it signs in as anybody; the command line names its source first.
        throw SecretStore.Failure(description: "the token secret holds \(given.count) characters, fewer than \(SecretStore.minimumLength)")
    }
    let store: any SessionStore
    if let givenStore { store = givenStore } else { store = try await openStore(configuration, logger: logger) }
    let secret = try await tokenSecret(configuration, store: store, logger: logger)
    let signer = TokenSigner(secret: secret, lifetimeMs: configuration.tokenLifetimeMs)
    let pipeline = CommitPipeline(store: store, logger: logger, timing: configuration.commitTiming)
    let library = profile.usesLibrary ? try loadLibrary(configuration, logger: logger) : nil
    let loops = MultiThreadedEventLoopGroup.singleton
    // On PostgreSQL the node shares sessions with any other node on the same database.
    let cluster = (store as? PostgresSessionStore).map { ClusterNode(store: $0, logger: logger) }
    var environment = SessionEnvironment(
        clock: clock, ids: ids, pipeline: pipeline, logger: logger,
        outbox: SessionOutbox.Configuration(
            replayLimit: configuration.replayLogLimit, replayBytesLimit: configuration.replayLogBytes, backlogLimit: configuration.outboxLimit,
            stallTimeoutMs: configuration.stallTimeoutMs),
        snapshotEvery: configuration.snapshotEvery, timing: configuration.timing,
        library: LibraryTracks(library?.tracks.map(\.wireTrack) ?? []))
    environment.cluster = cluster
    environment.endedRetentionMs = configuration.endedRetentionMs
    environment.endedSweepMs = configuration.endedSweepMs
    environment.deadlineScanMs = configuration.deadlineScanMs
    environment.idleReplicaMs = configuration.idleReplicaMs
    environment.forwardAnswerMs = configuration.forwardAnswerMs
    environment.commandLimits = profile.limitsSocketMessages ? configuration.commandLimits : nil
    let registry = SessionRegistry(store: store, environment: environment, defaults: profile.defaults, loops: loops)
    cluster?.setEvents(registry)
    try await registry.loadIndex()

    let context = ProfileContext(
        registry: registry, clock: clock, ids: ids, signer: signer, secret: secret, limiter: RateLimiter(clock: clock),
        configuration: configuration, metrics: metrics, library: library, logger: logger)
    let router = Router(context: JamRequestContext.self, options: profile.answersHeadAsGet ? .autoGenerateHeadEndpoints : [])
    let socketCaps = configuration.maxSocketsPerAddress.map(SocketCaps.init(limit:))
    let connectionCaps = configuration.maxConnectionsPerAddress.map(SocketCaps.init(limit:))
    let addresses = ClientAddresses(trustedProxies: configuration.trustedProxies)
    // First, so every profile's limits see the client as the socket upgrade does.
    router.add(middleware: ClientAddressMiddleware(addresses: addresses))
    let routeServices = profile.registerRoutes(on: router, context: context)
    onRoutes(router.routes.map { "\($0.method) \($0.path)" })
    // Shut down in reverse: the HTTP server (closing sockets), the profile's services, the
    // registry (snapshots), the store's own work, the commit pipeline (what is queued is
    // written), and the cluster node last: its leases go only once this node writes nothing
    // more, so a node taking a session over reads a log this one has finished.
    let services: [any Service] = (cluster.map { [$0] } ?? []) + [pipeline] + store.services + [registry] + routeServices
    let timing = RealtimeHandler.Timing()
    return Application(
        router: router,
        server: HTTPServerBuilder { responder in
            RealtimeServerChannel(
                responder: responder, profile: profile, context: context, maxFrameBytes: configuration.maxFrameBytes ?? profile.maxMessageBytes, timing: timing,
                headerTimeout: .nanoseconds(Int64(configuration.headerTimeout / .nanoseconds(1))), idleTimeout: configuration.httpIdleTimeout,
                bodyTimeout: .nanoseconds(Int64(configuration.bodyTimeout / .nanoseconds(1))),
                socketCaps: socketCaps, connectionCaps: connectionCaps, addresses: addresses)
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "OpenJam"),
        services: services,
        onServerRunning: { channel in
            await onServerRunning(channel.localAddress?.port ?? configuration.port)
        },
        eventLoopGroupProvider: .shared(loops),
        logger: logger
    )
}

/// The configured store: PostgreSQL when a database is given, else the SQLite file in the data folder.
/// The secret tokens are signed with: the configured one (`--secret`, `JAM_SECRET`); else, on
/// PostgreSQL, the one every node on the database shares (the first node's own, stored there),
/// so that a token from any node works on all; else the data folder's.
///
/// A configured secret is offered to the database too, so that nodes started without one
/// later sign with it; one that differs from what the database holds is used, with a warning.
func tokenSecret(_ configuration: ServerConfiguration, store: any SessionStore, logger: Logger) async throws -> String {
    let database = store as? PostgresSessionStore
    if let given = configuration.secret {
        if let database, try await database.sharedSecret(proposing: given) != given {
            logger.warning("the configured token secret differs from the one this database's nodes without JAM_SECRET sign with: their tokens are refused here, and this node's there")
        }
        return given
    }
    guard let database else { return try SecretStore.loadOrCreate(in: configuration.dataDirectory) }
    // The data folder's own secret is offered only if there is one: a new node makes none.
    let folderSecret = configuration.dataDirectory.appendingPathComponent("secret")
    let own = FileManager.default.fileExists(atPath: folderSecret.path)
        ? try SecretStore.loadOrCreate(in: configuration.dataDirectory) : SecretStore.generate()
    return try await database.sharedSecret(proposing: own)
}

func openStore(_ configuration: ServerConfiguration, logger: Logger) async throws -> any SessionStore {
    if let database = configuration.database {
        logger.info("sessions are kept in PostgreSQL", metadata: ["database": "\(database.redacted)"])
        return try await PostgresSessionStore.open(database, logger: logger)
    }
    return try SQLiteSessionStore.open(
        path: configuration.databasePath, logger: logger, checkpointInterval: configuration.checkpointInterval, reserveLog: configuration.reserveStoreLog)
}

/// The music folders, or the demo library when there are none.
func loadLibrary(_ configuration: ServerConfiguration, logger: Logger) throws -> MusicLibrary {
    var folders = configuration.musicFolders
    if folders.isEmpty {
        let demo = configuration.dataDirectory.appendingPathComponent("demo-library")
        try DemoLibrary.install(into: demo)
        folders = [demo]
    }
    let library = MusicLibrary.scan(folders)
    for problem in library.problems {
        logger.warning("a music file could not be read", metadata: ["file": "\(problem.file.path)", "reason": "\(problem.reason)"])
    }
    logger.info("music library ready", metadata: ["library.tracks": "\(library.tracks.count)"])
    return library
}
