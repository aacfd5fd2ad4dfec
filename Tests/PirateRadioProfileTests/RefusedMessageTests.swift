import Foundation
import Testing

@Suite("PirateRadio: refused messages")
struct RefusedMessageTests {
    @Test("A message the DJ may send but without what it needs gets error {message}; nothing changes and the socket stays open")
    func badMessagesAreAnsweredWithError() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let dj = party.dj.socket
            // PirateRadio's server drops these silently; the profile says why instead.
            let cases: [(String, String)] = [
                ("addToQueue without a track", #"{"type": "addToQueue", "data": {"nonce": "x"}}"#),
                ("addToQueue without a nonce", #"{"type": "addToQueue", "data": {"track": {"id": "spotify:track:1"}}}"#),
                ("playPrepare without a trackId", #"{"type": "playPrepare", "data": {"track": {"id": "spotify:track:1"}}}"#),
                ("playPrepare with a track that is not an object", #"{"type": "playPrepare", "data": {"trackId": "t", "track": "t"}}"#),
                ("removeFromQueue without a trackId", #"{"type": "removeFromQueue", "data": {}}"#),
            ]
            for (name, text) in cases {
                dj.sendRaw(text)
                let error = try await dj.next("error", "for \(name)")
                #expect(error.data.string("message") != nil, "\(name): \(error.text)")
            }
            try await dj.roundTrip()
            #expect(await dj.isClosed == false)

            let snapshot = try await party.snapshot()
            #expect(snapshot.int("epoch") == 0)
            #expect(snapshot.isNull("currentTrack"))
            #expect((snapshot["queue"] as? [Any])?.isEmpty == true, "\(snapshot)")
            let member = party.members[0].socket
            try await member.roundTrip()
            #expect(await member.frames("error").isEmpty, "errors go to the sender only")
            #expect(await member.frames("queueUpdate").isEmpty)
        }
    }
}
