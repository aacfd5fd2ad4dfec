import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// A data folder written by an earlier release opens with today's server, every session
/// intact: the release before the session log (`Fixtures/release-2026-11`) and one with it
/// (`Fixtures/release-2026-11-27`: snapshots and records), both made by
/// `Fixtures/make_release_fixture.sh`.
@Suite struct PreviousReleaseTests {
    struct Expected: Decodable {
        struct User: Decodable {
            let userId: UserID
            let displayName: String
        }

        struct Seen: Decodable {
            let user: UserID
            let view: SessionView
        }

        let secret: String
        /// When the views were read (folders made before the script recorded it have none).
        let capturedAt: Int64?
        let users: [User]
        let endedSession: SessionID
        let views: [Seen]
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    @Test(arguments: ["release-2026-11", "release-2026-11-27"])
    func everySessionQueueVoteAndTimelineOfAnEarlierReleaseComesBack(release: String) async throws {
        let fixture = Self.fixtures.appendingPathComponent(release)
        let expected = try JSONDecoder().decode(Expected.self, from: Data(contentsOf: fixture.appendingPathComponent("expected.json")))
        let directory = TestServer.makeDataDirectory()
        try FileManager.default.copyItem(at: fixture.appendingPathComponent("openjam.sqlite"), to: directory.appendingPathComponent("openjam.sqlite"))
        // A folder whose sessions know when nobody attended them ages: its playing session
        // pauses 15 minutes after the capture, and every session ends a day after it. It is
        // opened on a clock that starts at the capture. The oldest folder's sessions count
        // that time from the restart, so it opens on today's clock and its tracks play out.
        let clock = ShiftedClock()
        if let capturedAt = expected.capturedAt { clock.advance(byMs: Double(capturedAt) - SystemClock().nowPrecise()) }
        try await TestServer.with(dataDirectory: directory, clock: clock, configure: { $0.secret = expected.secret }) { server in
            let signer = TokenSigner(secret: expected.secret)
            let now = clock.now()
            func token(_ user: UserID) throws -> String {
                let name = try #require(expected.users.first { $0.userId == user }?.displayName)
                return signer.token(for: Identity(userId: user, displayName: name), now: now)
            }
            for seen in expected.views {
                let was = seen.view
                let view = try await server.api.view(try token(seen.user), was.session.id)
                #expect(view.session == was.session)
                #expect(view.members == was.members.map { Member(userId: $0.userId, displayName: $0.displayName, role: $0.role, connected: false) })
                #expect(view.skipRequests == was.skipRequests)
                let playing = try #require(was.nowPlaying)
                if playing.state != .playing || playing.item.track.durationMs.map({ playing.anchorMs + $0 - playing.positionMs > now }) == true {
                    // Paused, or still within the track: the same timeline, the same queue.
                    #expect(view.nowPlaying == playing)
                    #expect(view.queue == was.queue)
                    #expect(view.myVotes == was.myVotes)
                    #expect(view.history == was.history)
                } else {
                    // Tracks ended while the data folder lay on disk: each went into the history,
                    // and the next started exactly where the one before it ended.
                    let upcoming = [playing.item] + was.queue
                    var ends: [Int64] = []
                    var end = playing.anchorMs - playing.positionMs
                    for item in upcoming {
                        end += item.track.durationMs ?? 0
                        ends.append(end)
                    }
                    let played = ends.filter { $0 <= now }.count
                    let added = Array(view.history.dropFirst(was.history.count))
                    #expect(view.history.prefix(was.history.count) == was.history[...])
                    #expect(added.map(\.item.id) == upcoming.prefix(played).map(\.id))
                    #expect(added.map(\.endedAt) == Array(ends.prefix(played)))
                    #expect(added.allSatisfy { $0.outcome == .played })
                    #expect(view.nowPlaying?.item.id == upcoming.dropFirst(played).first?.id)
                    #expect(view.queue.map(\.id) == upcoming.dropFirst(played + 1).map(\.id))
                    // Votes stay on the items still queued; the ones that played (or play now) left the queue.
                    let left = Set(upcoming.prefix(played + 1).map(\.id.rawValue))
                    #expect(view.myVotes == was.myVotes.filter { !left.contains($0.key) })
                }
            }
            let host = try #require(expected.users.first)
            let ended = try await server.api.request("GET", "/api/v1/sessions/\(expected.endedSession)", token: try token(host.userId))
            #expect(ended.status == 410)
        }
    }
}
