import Foundation
import Hummingbird
import HummingbirdWebSocket
import JamCore
import JamMedia
import Logging
import Prometheus
import ServiceLifecycle

/// Builds the OpenJam server: the same application for `jam serve` and for the tests.
///
/// - Parameters:
///   - configuration: addresses, data folder, limits and timing.
///   - clock: server time (tests inject their own).
///   - ids: identifier minting (tests inject a deterministic one).
///   - metrics: the registry `/metrics` exports, when the process bootstrapped one.
///   - onServerRunning: called with the bound port once the server accepts connections.
public func buildApplication(
    _ configuration: ServerConfiguration,
    clock: any ServerClock = SystemClock(),
    ids: any IDGenerator = RandomIDGenerator(),
    metrics: PrometheusCollectorRegistry? = nil,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    var logger = Logger(label: "openjam")
    logger.logLevel = configuration.logLevel

    try FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
    let secret = try configuration.secret ?? SecretStore.loadOrCreate(in: configuration.dataDirectory)
    let signer = TokenSigner(secret: secret)
    let store = try await SQLiteSessionStore.open(path: configuration.databasePath, logger: logger)
    let persistence = PersistenceService(store: store, logger: logger)
    let scheduler = TimelineScheduler(clock: clock)
    let library: MusicLibrary? = switch configuration.profile {
    case .openJam: try loadLibrary(configuration, logger: logger)
    case .pirateRadio: nil
    }
    let environment = SessionEnvironment(
        clock: clock, ids: ids, persistence: persistence, scheduler: scheduler, logger: logger,
        replayLogLimit: configuration.replayLogLimit, fallbackTracks: library?.tracks.map(\.wireTrack) ?? [])
    let defaults: SessionDefaults = switch configuration.profile {
    case .openJam: .openJam
    case .pirateRadio: .pirateRadio(configuration.pirateRadio)
    }
    let registry = SessionRegistry(environment: environment, timing: configuration.timing, defaults: defaults)
    try await registry.load(from: store)
    let limiter = RateLimiter(clock: clock)

    var services: [any Service] = [persistence, scheduler]
    let router = Router(context: JamRequestContext.self)
    let webSocketRouter: Router<JamRequestContext>
    switch configuration.profile {
    case .openJam:
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: AuthMiddleware(signer: signer, clock: clock, maxBodyBytes: configuration.maxBodyBytes))
        SystemRoutes(registry: registry, clock: clock, metrics: metrics).register(on: router)
        AuthRoutes(signer: signer, clock: clock, ids: ids, limiter: limiter, limits: configuration.rateLimits).register(on: router)
        SessionRoutes(registry: registry, limiter: limiter, limits: configuration.rateLimits).register(on: router)
        let catalog = LibraryCatalog(library ?? MusicLibrary(tracks: []))
        LibraryRoutes(catalog: catalog).register(on: router)
        AudioRoutes(catalog: catalog).register(on: router)
        if !configuration.musicFolders.isEmpty, configuration.libraryRescanSeconds > 0 {
            services.append(LibraryRescanService(
                catalog: catalog, registry: registry, interval: .seconds(configuration.libraryRescanSeconds), logger: logger))
        }
        RealtimeRoute(
            registry: registry, clock: clock, maxFrameBytes: configuration.maxFrameBytes, outboxLimit: configuration.outboxLimit
        ).register(on: router)
        if let root = configuration.webRoot ?? WebRoutes.bundledRoot {
            WebRoutes(root: root).register(on: router)
        } else {
            logger.warning("the web client's files are missing; only the API is served")
        }
        webSocketRouter = router
    case .pirateRadio:
        let tokens = PirateRadioTokens(secret: secret, lifetimeMs: configuration.pirateRadio.tokenLifetimeMs, clock: clock)
        router.add(middleware: ErrorMiddleware(pirateRadio: true))
        router.add(middleware: AuthMiddleware(signer: signer, clock: clock, maxBodyBytes: configuration.maxBodyBytes))
        SystemRoutes(registry: registry, clock: clock, metrics: metrics).register(on: router)
        PirateRadioRoutes(
            registry: registry, tokens: tokens, clock: clock, limiter: limiter, options: configuration.pirateRadio,
            rateLimited: configuration.rateLimits != nil
        ).register(on: router)
        // Its socket answers on any path, so upgrades get a router of their own.
        webSocketRouter = Router(context: JamRequestContext.self)
        webSocketRouter.add(
            middleware: PirateRadioRealtime(
                registry: registry, tokens: tokens, clock: clock, options: configuration.pirateRadio,
                maxFrameBytes: configuration.maxFrameBytes, outboxLimit: configuration.outboxLimit
            ).middleware)
    }

    return Application(
        router: router,
        server: .http1WebSocketUpgrade(
            webSocketRouter: webSocketRouter,
            configuration: .init(ws: .init(maxFrameSize: configuration.maxFrameBytes, autoPing: .enabled(timePeriod: .seconds(30)), closeTimeout: .seconds(5)))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "OpenJam"),
        services: services,
        onServerRunning: { channel in
            await onServerRunning(channel.localAddress?.port ?? configuration.port)
        },
        logger: logger
    )
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
