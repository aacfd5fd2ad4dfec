import ServiceLifecycle

/// Runs `body` every `interval` (first after one interval) until a graceful shutdown, which
/// does not wait out the interval: the loop of a service that works now and then.
func repeatUntilShutdown(every interval: Duration, _ body: () async throws -> Void) async rethrows {
    while !Task.isShuttingDownGracefully {
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        } catch {
            return
        }
        guard !Task.isShuttingDownGracefully else { return }
        try await body()
    }
}
