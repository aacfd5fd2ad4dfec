import JamMedia
import Logging
import NIOPosix
import ServiceLifecycle

/// Rescans the music folders every `interval`, so music added, changed or removed
/// while the server runs is offered (and no longer offered) without a restart.
/// Unchanged files are not read again, which keeps a rescan to a walk of the folders.
package struct LibraryRescanService: Service {
    let catalog: LibraryCatalog
    let registry: SessionRegistry
    let interval: Duration
    let logger: Logger

    package init(catalog: LibraryCatalog, registry: SessionRegistry, interval: Duration, logger: Logger) {
        self.catalog = catalog
        self.registry = registry
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        try await repeatUntilShutdown(every: interval) {
            let previous = await catalog.library
            // Reading files blocks: it runs on NIO's thread pool, not on the cooperative pool.
            let rescanned = try await NIOThreadPool.singleton.runIfActive { previous.rescan() }
            let added = Set(rescanned.tracks.map(\.id)).subtracting(previous.tracks.map(\.id)).count
            let removed = Set(previous.tracks.map(\.id)).subtracting(rescanned.tracks.map(\.id)).count
            guard await catalog.take(rescanned) else { return }
            // As at start: sessions' library tracks carry the server's cover address.
            await registry.libraryChanged(rescanned.tracks.map(\.wireTrack))
            logger.info("music library rescanned", metadata: [
                "library.tracks": "\(rescanned.tracks.count)", "library.added": "\(added)", "library.removed": "\(removed)",
                "library.problems": "\(rescanned.problems.count)",
            ])
        }
    }
}
