/// Lets one lease-taking statement of a node run at a time, in the order they came.
///
/// PostgreSQL counts a session-level advisory lock taken twice as two, and giving it up once
/// then leaves it held. Two statements that both asked for a lease the node did not hold yet
/// (a lease poll and a session being read, say) would take it twice; in turns, the second
/// finds it held and does not ask again. The statements run one after another on the lease
/// connection anyway, so waiting here costs nothing.
struct LeaseTurns: Sendable {
    private let turns = KeyedTurns<Bool>()

    /// Runs `body` once every turn taken before it has ended.
    func inTurn<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        try await turns.inTurn(true, body)
    }
}
