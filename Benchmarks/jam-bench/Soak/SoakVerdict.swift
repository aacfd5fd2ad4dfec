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
            "playing \(nowPlaying ?? "nothing"), \(queue.count) queued, \(members.count) members, history \(history.count), my votes \(myVotes.count)"
        }

        /// Where `other` first differs from this, in a few words.
        func difference(from other: Shape) -> String {
            if nowPlaying != other.nowPlaying { return "playing \(nowPlaying ?? "nothing") / \(other.nowPlaying ?? "nothing")" }
            if queue != other.queue {
                let index = queue.indices.first { $0 >= other.queue.count || queue[$0] != other.queue[$0] } ?? queue.count
                let mine = index < queue.count ? queue[index] : "end", theirs = index < other.queue.count ? other.queue[index] : "end"
                return "queue (\(queue.count) / \(other.queue.count) items) at \(index): \(mine) / \(theirs)"
            }
            if members != other.members { return "members \(members) / \(other.members)" }
            if history != other.history { return "history (\(history.count) / \(other.history.count) entries)" }
            return "my votes (\(myVotes.count) / \(other.myVotes.count))"
        }
    }

    /// Waits (bounded) until each member's mirror shows what the server shows that member at
    /// the same moment (the mirror before or after the server's answer, as the session keeps
    /// advancing); returns the members that never agreed, with their first difference.
    static func mirrorsAgree(_ members: [SoakMember], sessionIds: [SessionID], within timeout: Duration) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        var disagreements: [String] = []
        for member in members {
            var last = "never compared"
            while true {
                let before = await member.client.mirror.view
                let phase = await member.client.phase
                do {
                    let server = Shape(try await member.api.session(sessionIds[member.session]))
                    let after = await member.client.mirror.view
                    let mirrors = [before, after].compactMap { $0 }.map(Shape.init)
                    if phase == .connected, mirrors.contains(server) { break }
                    last = phase != .connected ? "not connected (\(phase))" : mirrors.last.map { "client / server: \($0.difference(from: server))" } ?? "no view"
                } catch {
                    last = "the server's view failed: \(error)"
                }
                guard ContinuousClock.now < deadline else {
                    disagreements.append("member \(member.index): \(last)")
                    break
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
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

    /// Acknowledged votes on items still queued that the server does not show. A member whose
    /// session cannot be read counts too: its votes were not checked, so the verdict cannot
    /// say they were kept.
    static func lostVotes(_ votes: [Int: [ItemID: Int]], members: [SoakMember], sessionIds: [SessionID]) async -> [String] {
        var lost: [String] = []
        for member in members {
            guard let mine = votes[member.index] else { continue }
            let view: SessionView
            do {
                view = try await member.api.session(sessionIds[member.session])
            } catch {
                lost.append("member \(member.index)'s \(mine.count) acknowledged votes could not be checked: \(error)")
                continue
            }
            let queued = Set(view.queue.map(\.id))
            for (item, value) in mine where queued.contains(item) {
                let shown = view.myVotes[item.rawValue] ?? 0
                if shown != value { lost.append("member \(member.index) voted \(value) on \(item), the server shows \(shown)") }
            }
        }
        return lost
    }
}
