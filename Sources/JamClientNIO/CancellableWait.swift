import NIOConcurrencyHelpers
import NIOCore

extension EventLoopFuture where Value: Sendable {
    /// The future's value, or `CancellationError` as soon as the waiting task is cancelled,
    /// whichever comes first. The work behind the future goes on until its owner calls it off,
    /// so a value that arrives after the cancel goes to `unwanted`, which lets it go.
    func valueUnlessCancelled(unwanted: @escaping @Sendable (Value) -> Void) async throws -> Value {
        let waiter = NIOLockedValueBox<CheckedContinuation<Value, any Error>?>(nil)
        // Whoever takes the continuation first resumes it: the result or the cancel.
        let take: @Sendable () -> CheckedContinuation<Value, any Error>? = { waiter.withLockedValue { continuation in defer { continuation = nil }; return continuation } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.withLockedValue { $0 = continuation }
                whenComplete { result in
                    if let continuation = take() {
                        continuation.resume(with: result)
                    } else if case .success(let value) = result {
                        unwanted(value)
                    }
                }
                // A cancel that came before the continuation was stored found nothing to resume.
                if Task.isCancelled { take()?.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            take()?.resume(throwing: CancellationError())
        }
    }
}
