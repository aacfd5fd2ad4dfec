import Hummingbird
import JamProtocol
import NIOCore
import Prometheus

/// Health, server time and metrics.
package struct SystemRoutes {
    let registry: SessionRegistry
    let clock: any ServerClock
    let metrics: PrometheusCollectorRegistry?

    package init(registry: SessionRegistry, clock: any ServerClock, metrics: PrometheusCollectorRegistry?) {
        self.registry = registry
        self.clock = clock
        self.metrics = metrics
    }

    package func register(on router: Router<JamRequestContext>) {
        router.get("healthz") { _, _ in
            if let reason = registry.unavailableBecause {
                // A balancer checking this route stops sending members to a node that
                // would refuse every command.
                let body = Health(status: .unavailable, sessions: registry.liveCount, reason: reason)
                return try RouteHelpers.json(body, status: .serviceUnavailable)
            }
            return try RouteHelpers.json(Health(status: .ok, sessions: registry.liveCount))
        }
        router.get("api/v1/time") { _, _ in
            try RouteHelpers.json(ServerTime(serverTime: clock.now()))
        }
        router.get("metrics") { _, _ in
            guard let metrics else { throw JamError(.notFound, "metrics are not enabled on this server") }
            // Counted as scraped: sessions end, are swept and purged in many places, and on
            // several nodes on other nodes too.
            Metrics.liveSessions.record(await registry.sessionsNotEnded())
            var bytes: [UInt8] = []
            metrics.emit(into: &bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
