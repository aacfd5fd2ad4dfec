import Foundation
import JamClient
import JamProtocol

/// The end of a soak: what must hold after every kill and restart.
enum SoakVerdict {
    /// The parts of a session view every member must agree on with the server.
    struct Shape: Equatable, CustomStringConvertible {
        let queue: [String]
        let nowPlaying: String?
        let members: [String]
        let history: [ItemID]
        let myVotes: [String: Int]

        init(_ view: SessionView) {
            queue = view.queue.map { "\($0.id):\($0.score)" }
            nowPlaying = view.nowPlaying.map { "\($0.item.id)@\($0.epoch):\($0.state)" }
            members = view.members.map { "\($0.userId):\($0.role)" }.sorted()
            history = view.history.map(\.item.id)
            myVotes = view.myVotes
        }

        var description: String {
            "playing \(nowPlaying ?? "nothing"), queue \(queue), \(members.count) members, history \(history.count), my votes \(myVotes.count)"
        }
    }

    /// Waits (bounded) until every member's mirror shows what the server shows that member;
    /// returns the members that never agreed, with both views.
    static func mirrorsAgree(_ members: [SoakMember], sessionIds: [SessionID], within timeout: Duration) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        var disagreements: [String] = []
        repeat {
            disagreements = []
            for member in members {
                let id = sessionIds[member.session]
                guard await member.client.phase == .connected, let mirror = await member.client.mirror.view else {
                    disagreements.append("member \(member.index): not connected (\(await member.client.phase))")
                    continue
                }
                do {
                    let server = try await member.api.session(id)
                    if Shape(mirror) != Shape(server) {
                        disagreements.append("member \(member.index): client \(Shape(mirror)) / server \(Shape(server))")
                    }
                } catch {
                    disagreements.append("member \(member.index): the server's view failed: \(error)")
                }
            }
            if disagreements.isEmpty { return [] }
            try? await Task.sleep(for: .milliseconds(250))
        } while ContinuousClock.now < deadline
        return disagreements
    }

    /// Sends every acknowledged add again with its nonce: a server that kept it answers with
    /// the same item; one that lost it adds a new one. Returns the adds it lost.
    static func lostAdds(_ adds: [SoakLedger.Add], members: [SoakMember]) async -> [String] {
        var lost: [String] = []
        for add in adds {
            guard let member = members.first(where: { $0.index == add.member }) else { continue }
            do {
                let ack = try await member.client.send(.addToQueue(AddToQueue(track: add.track, nonce: add.nonce)))
                if ack.itemId != add.itemId {
                    lost.append("\(add.nonce): acknowledged as \(add.itemId), now \(ack.itemId.map(\.rawValue) ?? "no item")")
                }
            } catch {
                lost.append("\(add.nonce): acknowledged as \(add.itemId), the repeat was refused: \(error)")
            }
        }
        return lost
    }

    /// Tracks that appear more than once in a session (each add had a track of its own).
    static func appliedTwice(_ view: SessionView) -> [String] {
        var seen: [String: Int] = [:]
        let items = view.queue + [view.nowPlaying?.item, view.upNext?.item].compactMap { $0 } + view.history.map(\.item)
        for item in items { seen[item.track.id, default: 0] += 1 }
        return seen.filter { $0.value > 1 }.map { "\($0.key) ×\($0.value)" }.sorted()
    }

    /// Acknowledged votes on items still queued that the server does not show.
    static func lostVotes(_ votes: [Int: [ItemID: Int]], members: [SoakMember], sessionIds: [SessionID]) async -> [String] {
        var lost: [String] = []
        for member in members {
            guard let mine = votes[member.index], let view = try? await member.api.session(sessionIds[member.session]) else { continue }
            let queued = Set(view.queue.map(\.id))
            for (item, value) in mine where queued.contains(item) {
                let shown = view.myVotes[item.rawValue] ?? 0
                if shown != value { lost.append("member \(member.index) voted \(value) on \(item), the server shows \(shown)") }
            }
        }
        return lost
    }
}
