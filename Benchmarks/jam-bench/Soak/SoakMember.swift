import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import Synchronization

/// One member of a soak session, using the SDK as an app does: a `SessionClient` that keeps
/// its socket (and reconnects after every kill), and a loop of what people do.
final class SoakMember: Sendable {
    let index: Int
    let session: Int
    let isHost: Bool
    let api: JamAPI
    let client: SessionClient
    /// A member who joins during the run: how long after the start, and the code to join with.
    let lateJoin: (after: Duration, code: String)?
    private let stopping = Atomic<Bool>(false)
    private let joined: Atomic<Bool>

    init(
        index: Int, session: Int, isHost: Bool, api: JamAPI, sessionId: SessionID, me: UserID, seed: UInt64,
        lateJoin: (after: Duration, code: String)? = nil
    ) {
        self.index = index
        self.session = session
        self.isHost = isHost
        self.api = api
        self.lateJoin = lateJoin
        joined = Atomic(lateJoin == nil)
        client = SessionClient(
            api: api, sessionId: sessionId, me: me, transport: NIOWebSocketTransport(), backoff: Backoff(baseMs: 100, capMs: 2_000), seed: seed)
    }

    /// Ends the loop after the command under way.
    func stop() { stopping.store(true, ordering: .relaxed) }

    /// True once a member of the session (late joiners join during the run).
    var isMember: Bool { joined.load(ordering: .relaxed) }

    /// Holds the member's socket once it is a member, until cancelled. A connection the
    /// server ends for good (the member is no longer let in) goes in the ledger: the run
    /// never asks for that, so the verdict fails on it.
    func connect(ledger: SoakLedger) async {
        while !isMember {
            if Task.isCancelled { return }
            try? await Task.sleep(for: .milliseconds(100))
        }
        do {
            try await client.run()
        } catch is CancellationError {
            return
        } catch {
            await ledger.droppedForGood(member: index, reason: "\(error)")
        }
    }

    /// A late joiner joins over REST at its time (again and again while the server is down).
    private func joinWhenDue(ledger: SoakLedger) async {
        guard let lateJoin else { return }
        try? await Task.sleep(for: lateJoin.after)
        while !stopping.load(ordering: .relaxed) {
            do {
                _ = try await api.join(code: lateJoin.code)
                joined.store(true, ordering: .relaxed)
                await ledger.joined()
                return
            } catch {
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// Adds, votes, skips (or asks to) and drops its socket now and then, a few times a
    /// second, until stopped; records every answer in `ledger`.
    func act(ledger: SoakLedger, seed: UInt64) async {
        var random = SeededRandom(seed: seed)
        var count = 0
        await joinWhenDue(ledger: ledger)
        while !stopping.load(ordering: .relaxed), isMember {
            try? await Task.sleep(for: .milliseconds(Int.random(in: 150...600, using: &random)))
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                switch roll {
                case 0..<35:
                    // The queue stays as long as the per-member limit lets it (a host has
                    // none, so it keeps to the same), so the load does not grow with time.
                    let me = client.me
                    guard let queue = await client.mirror.view?.queue, queue.count(where: { $0.addedBy.userId == me }) < 20 else { continue }
                    count += 1
                    let track = Track(
                        id: "soak-\(index)-\(count)", name: "Soak \(index).\(count)", artist: "Member \(index)",
                        durationMs: Int64.random(in: 6_000...15_000, using: &random), source: .external)
                    let nonce = "soak-\(index)-\(count)"
                    let ack = try await client.send(.addToQueue(AddToQueue(track: track, nonce: nonce)))
                    guard let itemId = ack.itemId else { continue }
                    await ledger.added(SoakLedger.Add(member: index, nonce: nonce, track: track, itemId: itemId))
                case 35..<75:
                    guard let queue = await client.mirror.view?.queue, !queue.isEmpty else { continue }
                    let item = queue[Int.random(in: 0..<queue.count, using: &random)].id
                    let value = Int.random(in: -1...1, using: &random)
                    _ = try await client.send(.vote(Vote(itemId: item, value: value)))
                    await ledger.voted(member: index, item: item, value: value)
                case 75..<85:
                    _ = try await client.send(isHost ? .skip(Skip()) : .requestSkip(Skip()))
                    await ledger.acked(isHost ? "skip" : "requestSkip")
                case 85..<90:
                    await client.dropConnection()
                    await ledger.reconnected()
                default:
                    continue
                }
            } catch let error as JamError {
                await ledger.refusedWith(error.code)
            } catch {
                await ledger.refusedWith(.internal)
            }
        }
    }
}
