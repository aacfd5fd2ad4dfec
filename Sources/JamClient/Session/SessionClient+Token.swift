import JamProtocol

/// The member's token, kept fresh: a token lives `--token-hours` (30 days by default), and an
/// expired one cannot be refreshed, so a client that held one connection open past it could
/// never reconnect. Once half its life is gone (`JamAPI.tokenRefreshIsDue`) the client swaps it
/// before connecting, and while connected, as the web client does.
extension SessionClient {
    /// Swaps the token for a fresh one when it is due; one that cannot be swapped now (the
    /// server unreachable or busy) is still valid, and the next look tries again. An expired
    /// one is refused here and at the socket, which says so for good.
    @discardableResult
    func refreshTokenIfDue() async -> Bool {
        guard api.tokenRefreshIsDue else { return true }
        do {
            // On a copy: an actor's state cannot be changed across the request's suspension.
            var refreshing = api
            let fresh = try await refreshing.refreshToken()
            api = refreshing
            broadcast(.token(fresh, refreshAt: refreshing.tokenRefreshAt))
            return true
        } catch {
            logger.info("the token could not be refreshed", metadata: ["error.code": "\(error.code)", "error": "\(error.message)"])
            return false
        }
    }

    /// Refreshes the token whenever it is due while a socket is open; ends only when cancelled
    /// (with the socket), so it runs only for a client with a token. A failed refresh is tried again after 30 s, doubling up to 30 minutes.
    func keepTokenFresh() async throws {
        var failures = 0
        while true {
            let wait: Double
            if api.tokenRefreshIsDue, !(await refreshTokenIfDue()) {
                wait = min(Self.tokenRetryLongestMs, Self.tokenRetryFirstMs * Double(1 << min(failures, 10)))
                failures += 1
            } else {
                // Also right after a refresh: a fresh token due at once (a device clock far
                // ahead of the server's) waits like a failure instead of asking again at once.
                failures = 0
                let untilDue = Double((api.tokenRefreshAt ?? 0) - api.wallClock())
                wait = min(Self.tokenLookEveryMs, max(Self.tokenRetryFirstMs, untilDue))
            }
            try await sleeper.sleep(ms: wait)
        }
    }

    /// A device's clock may jump (sleep, a new time): the due time is looked at again hourly.
    static var tokenLookEveryMs: Double { 3_600_000 }
    static var tokenRetryFirstMs: Double { 30_000 }
    static var tokenRetryLongestMs: Double { 1_800_000 }
}
