import Foundation
import JamClient
import JamProtocol
import Testing

/// What the client does with the event types of a newer server.
@Suite struct UnknownEventTests {
    static func envelope(_ event: ServerEvent, seq: Int64) -> ServerEnvelope {
        ServerEnvelope(event: event, epoch: 0, seq: seq, timestamp: 0)
    }

    @Test("an unknown event that took a new seq brings the whole state; one that carries the current seq is dropped")
    func anUnknownEventThatTookASeqBringsTheWholeStateAndAPassingOneIsDropped() async throws {
        let socket = ScriptedSocket()
        let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")))
        let client = SessionClient(api: api, sessionId: "session", me: "host", transport: ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        defer { running.cancel() }

        await socket.push(Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5))
        // A passing frame of a type this build does not know: it carries the current seq.
        await socket.push(#"{"type":"somethingNew","data":{},"epoch":0,"seq":5,"timestamp":0}"#)
        await socket.push(Self.envelope(.memberJoined(Member(userId: "gil", displayName: "Gil", role: .member, connected: true)), seq: 6))
        // An event of a type this build does not know, and the known ones after it.
        await socket.push(#"{"type":"somethingNewer","data":{"x":1},"epoch":0,"seq":7,"timestamp":0}"#)
        await socket.push(Self.envelope(.memberLeft(MemberLeft(userId: "gil", hostId: "host")), seq: 8))
        try await Self.until("a hello") { try await !socket.hellos().isEmpty }
        // Not `hello {lastSeq: 6}`: the server would replay the same frame.
        #expect(try await socket.hellos() == [nil])

        // The whole state comes, and the client follows the session again.
        var view = Fixture.view(nowPlaying: nil)
        view.members.append(Member(userId: "fay", displayName: "Fay", role: .member, connected: true))
        await socket.push(Self.envelope(.stateSync(view), seq: 8))
        await socket.push(Self.envelope(.memberJoined(Member(userId: "hal", displayName: "Hal", role: .member, connected: true)), seq: 9))
        try await Self.until("the mirror after the state") { await client.mirror.seq == 9 }
        #expect(await client.mirror.view?.members.map(\.userId) == ["host", "fay", "hal"])
        #expect(try await socket.hellos() == [nil])

        // A gap: the client resumes after 9, and the first frame the resume brings is of a type
        // it does not know. The resume in flight must not keep it from asking for the state.
        await socket.push(Self.envelope(.memberLeft(MemberLeft(userId: "hal", hostId: "host")), seq: 11))
        try await Self.until("the resume") { try await socket.hellos() == [nil, 9] }
        await socket.push(#"{"type":"somethingNewer","data":{},"epoch":0,"seq":10,"timestamp":0}"#)
        try await Self.until("the request for the state") { try await socket.hellos() == [nil, 9, nil] }
    }

    @Test("a whole state this build cannot read ends the connection saying so, rather than leaving the session standing still", .timeLimit(.minutes(1)))
    func anUnreadableWholeStateEndsTheConnectionSayingWhy() async throws {
        let socket = ScriptedSocket()
        let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")))
        let client = SessionClient(api: api, sessionId: "session", me: "host", transport: ScriptedTransport(socket: socket))
        let running = Task { try await client.run() }
        defer { running.cancel() }

        // A newer server's state: a member with a role this build does not know.
        let state = Self.envelope(.stateSync(Fixture.view(nowPlaying: nil)), seq: 5).jsonString()
        let newer = state.replacingOccurrences(of: #""role":"host""#, with: #""role":"producer""#)
        #expect(newer != state, "the fixture's host has no role to change")
        await socket.push(newer)
        await socket.push(Self.envelope(.memberJoined(Member(userId: "gil", displayName: "Gil", role: .member, connected: true)), seq: 6))
        let error = await #expect(throws: JamError.self) { try await running.value }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("cannot read") == true, "\(String(describing: error))")
        guard case .failed(let failure) = await client.phase else {
            Issue.record("the phase is \(await client.phase), not failed")
            return
        }
        #expect(failure.code == .malformed)
        #expect(await client.mirror.view == nil, "nothing was shown from a state that could not be read")
    }

    static func until(_ what: String, _ condition: @Sendable () async throws -> Bool) async throws {
        // Generous: everything here runs on the shared task pool, which the whole suite keeps
        // busy; in a full run this test takes ~50 s of waiting for its turn (alone, 20 ms).
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("timed out waiting for \(what)")
    }
}
