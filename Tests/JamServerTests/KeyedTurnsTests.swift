import Synchronization
import Testing

@testable import JamServer

/// `KeyedTurns`: the bodies of one key one at a time, in the order they came; other keys beside them.
@Suite struct KeyedTurnsTests {
    /// A gate a body waits at until the test opens it.
    final class Gate: Sendable {
        private let opened = Mutex<[CheckedContinuation<Void, Never>]?>([])
        func wait() async {
            await withCheckedContinuation { continuation in
                let waiting = opened.withLock { state -> Bool in
                    guard state != nil else { return false }
                    state!.append(continuation)
                    return true
                }
                if !waiting { continuation.resume() }
            }
        }
        func open() {
            for continuation in opened.withLock({ state in defer { state = nil }; return state ?? [] }) { continuation.resume() }
        }
    }

    /// What the bodies did, in order.
    final class Log: Sendable {
        private let lines = Mutex<[String]>([])
        func withLock<T>(_ body: (inout [String]) -> T) -> T { lines.withLock { body(&$0) } }
    }

    @Test func turnsOfOneKeyRunOneAtATimeInOrderAndOtherKeysRunBeside() async throws {
        let turns = KeyedTurns<String>()
        let log = Log()
        let gate = Gate()
        let first = Task { await turns.inTurn("ann") { log.withLock { $0.append("ann 1 starts") }; await gate.wait(); log.withLock { $0.append("ann 1 ends") } } }
        while log.withLock({ $0.isEmpty }) { await Task.yield() }
        let second = Task { await turns.inTurn("ann") { log.withLock { $0.append("ann 2") } } }
        while await turns.waitingCount("ann") < 1 { await Task.yield() }
        // Another key is not held up by Ann's turn.
        await turns.inTurn("bob") { log.withLock { $0.append("bob") } }
        #expect(log.withLock { $0 } == ["ann 1 starts", "bob"], "Ann's second waits for her first")
        gate.open()
        await first.value
        await second.value
        #expect(log.withLock { $0 } == ["ann 1 starts", "bob", "ann 1 ends", "ann 2"])
        #expect(await turns.busyKeys == 0, "no key is kept once its turns are over")
    }

    @Test func aTurnThatThrowsPassesTheKeyOn() async throws {
        struct Refused: Error {}
        let turns = KeyedTurns<Int>()
        await #expect(throws: Refused.self) { try await turns.inTurn(1) { throw Refused() } }
        #expect(await turns.inTurn(1) { 42 } == 42)
        #expect(await turns.busyKeys == 0)
    }
}

extension KeyedTurns {
    /// Test access: callers waiting for `key`'s turn.
    func waitingCount(_ key: Key) -> Int { waiting[key]?.count ?? 0 }
}
