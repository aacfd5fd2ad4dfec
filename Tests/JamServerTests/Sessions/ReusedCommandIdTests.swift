import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// A socket's command id answers the command it was first sent with: the same command sent
/// again gets that answer, and another command under the id is refused (`keyReused`) and not
/// applied, as a REST call's reused idempotency key is, rather than answered as if it had been.
struct ReusedCommandIdTests {
    static func answer(to id: String) -> @Sendable (ServerEnvelope) -> Bool {
        { $0.ack?.id == id || $0.error?.id == id }
    }

    static func trackIDs(_ view: SessionView) -> [String] {
        [view.nowPlaying?.item.track.id].compactMap { $0 } + view.queue.map(\.track.id)
    }

    /// Adds track 1 under `c-1`, then sends track 2's add and a skip under the same id;
    /// returns the first add's answer.
    static func reuse(_ socket: TestSocket) async throws -> ServerEnvelope {
        socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "n1")), id: "c-1")
        let added = try await socket.next("the add's answer", where: Self.answer(to: "c-1"))
        #expect(added.ack?.itemId != nil, "\(added.event)")
        try await expectRefused(socket)
        return added
    }

    /// Sends `command` under `id` twice: acknowledged, and sent again, given the same answer.
    static func expectAnsweredOnce(_ command: ClientCommand, id: String, on socket: TestSocket) async throws {
        socket.send(command, id: id)
        let first = try await socket.next("the answer to \(id)", where: Self.answer(to: id))
        #expect(first.ack != nil, "\(first.event)")
        socket.send(command, id: id)
        let again = try await socket.next("the answer to \(id) sent again", where: Self.answer(to: id))
        #expect(again == first, "the kept answer: \(again.event)")
    }

    /// Sends track 2's add and a skip under `c-1`, each refused.
    static func expectRefused(_ socket: TestSocket) async throws {
        for command in [ClientCommand.addToQueue(AddToQueue(track: testTrack(2), nonce: "n2")), .skip(Skip())] {
            socket.send(command, id: "c-1")
            let refused = try await socket.next("the answer to another command under the id", where: Self.answer(to: "c-1"))
            #expect(refused.error?.code == .keyReused, "\(refused.event)")
            #expect(refused.error?.message.contains("already used for a different command") == true, "\(refused.event)")
        }
    }

    @Test func anIdSentWithAnotherCommandIsRefusedAndStillAnswersItsOwn() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let host = party.host.socket
            let added = try await Self.reuse(host)
            #expect(Self.trackIDs(try await server.api.view(party.host.token, party.id)) == ["track-1"], "neither the second add nor the skip applied")

            host.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "n1")), id: "c-1")
            let again = try await host.next("the resent add's answer", where: Self.answer(to: "c-1"))
            #expect(again.ack == added.ack, "the first answer, kept: \(again.event)")
            #expect(Self.trackIDs(try await server.api.view(party.host.token, party.id)) == ["track-1"])
        }
    }

    @Test func anIdIsStillToldApartFromAnotherCommandAfterARestart() async throws {
        let directory = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (token, id) = try await TestServer.with(dataDirectory: directory) { server in
            let party = try await Party.start(server, guests: [])
            _ = try await Self.reuse(party.host.socket)
            await party.host.socket.close()
            return (party.host.token, party.id)
        }
        try await TestServer.with(dataDirectory: directory) { server in
            let socket = TestSocket(server: server, session: id, token: token)
            try await socket.next(.stateSync)
            try await Self.expectRefused(socket)
            #expect(Self.trackIDs(try await server.api.view(token, id)) == ["track-1"])
            await socket.close()
        }
    }

    @Test func aLibraryAddSentAgainAfterARestartIsAnsweredThoughTheLogHoldsTheLibrarysCopy() async throws {
        let directory = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (token, id, claimed, first) = try await TestServer.with(dataDirectory: directory) { server in
            let party = try await Party.start(server, guests: [])
            let found = try await server.api.request("GET", "/api/v1/search?q=NIGHT%20b", token: party.host.token)
            let known = try #require(try found.decode(SearchResults.self).tracks.first)
            // Another copy than the library's, which the log then holds in its place.
            let claimed = Track(id: known.id, name: "Something else", artist: "Nobody", durationMs: nil, source: .library)
            party.host.socket.send(.addToQueue(AddToQueue(track: claimed, nonce: "n1")), id: "lib-1")
            let first = try await party.host.socket.next("the add's answer", where: Self.answer(to: "lib-1"))
            #expect(first.ack?.itemId != nil, "\(first.event)")
            await party.host.socket.close()
            return (party.host.token, party.id, claimed, first)
        }
        try await TestServer.with(dataDirectory: directory) { server in
            let socket = TestSocket(server: server, session: id, token: token)
            try await socket.next(.stateSync)
            socket.send(.addToQueue(AddToQueue(track: claimed, nonce: "n1")), id: "lib-1")
            let again = try await socket.next("the resent add's answer", where: Self.answer(to: "lib-1"))
            #expect(again.ack == first.ack, "\(again.event)")
            #expect(Self.trackIDs(try await server.api.view(token, id)) == [claimed.id])
            await socket.close()
        }
    }

    @Test func aSyncReportSentAgainGetsItsAnswerAndACommandUnderItsIdIsRefused() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0].socket
            let report = ClientCommand.syncReport(SyncReport(epoch: 0, offsetMs: 0, errorMs: 2, driftMs: 0))
            try await Self.expectAnsweredOnce(report, id: "report-1", on: eli)
            eli.send(.requestSkip(Skip()), id: "report-1")
            let refused = try await eli.next("the skip request's answer", where: Self.answer(to: "report-1"))
            #expect(refused.error?.code == .keyReused, "\(refused.event)")
        }
    }

    @Test func aResyncSentAgainGetsItsAnswerAndAnAddUnderItsIdIsRefusedNotAcknowledged() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let host = party.host.socket
            try await Self.expectAnsweredOnce(.resync(Resync(userId: party.guests[0].id)), id: "resync-1", on: host)
            // Answered with the re-sync's ack, the add would look stored and never be.
            host.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "n1")), id: "resync-1")
            let refused = try await host.next("the add's answer", where: Self.answer(to: "resync-1"))
            #expect(refused.error?.code == .keyReused, "\(refused.event)")
            #expect(Self.trackIDs(try await server.api.view(party.host.token, party.id)) == [])
        }
    }
}
