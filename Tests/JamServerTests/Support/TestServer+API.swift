import JamProtocol
import JamTestSupport

extension TestServer {
    /// A REST client for this server.
    var api: RestClient { RestClient(baseURL: baseURL) }

    /// Waits until this server's view of session `id` holds every one of `tracks` (queued or
    /// playing), and returns that view.
    @discardableResult
    func waitForQueue(_ token: String, _ id: SessionID, containing tracks: Set<String>, timeout: Duration = .seconds(10)) async throws -> SessionView {
        var present: Set<String> = []
        return try await eventually("the queue never held \(tracks); it has \(present)", timeout: timeout) {
            let view = try await api.view(token, id)
            present = view.trackIDs
            return present.isSuperset(of: tracks) ? view : nil
        }
    }
}

extension SessionView {
    /// The tracks queued or playing.
    var trackIDs: Set<String> { Set(queue.map(\.track.id) + [nowPlaying?.item.track.id].compactMap { $0 }) }
}
