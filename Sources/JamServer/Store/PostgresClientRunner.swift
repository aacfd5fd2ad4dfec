import PostgresNIO
import Synchronization

/// Runs the client's connection pool from `open` until `close`, outside the server's graceful
/// shutdown: the commit pipeline still writes its last batches through it after every service
/// that submits writes has stopped.
final class PostgresClientRunner: Sendable {
    private let client: PostgresClient
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(client: PostgresClient) { self.client = client }

    func start() {
        // Detached so that it does not inherit a graceful shutdown it must outlive; `stop`
        // cancels it and waits for it, so it never outlives the store.
        task.withLock { $0 = Task.detached { [client] in await client.run() } }
    }

    func stop() async {
        let running = task.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        running?.cancel()
        await running?.value
    }
}
