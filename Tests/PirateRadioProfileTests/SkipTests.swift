import Foundation
import Testing

@Suite("PirateRadio: skip")
struct SkipTests {
    @Test("The DJ's skip plays the queue head from 0 in the next epoch; everybody gets a stateSync")
    func djSkipPlaysTheQueueHead() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            _ = try await party.dj.socket.addAndWait(prTrack(2))
            try await party.play(prTrack(1))

            party.dj.socket.send("skip")
            for person in party.everyone {
                let sync = try await person.socket.next("stateSync", "after the skip") { _ in true }
                #expect(sameTrack(sync.data.object("currentTrack"), prTrack(2)), "\(person.id): \(sync.text)")
                #expect(sync.data.bool("isPlaying") == true, "\(sync.text)")
                #expect(sync.data.int("positionMs") == 0, "\(sync.text)")
                #expect(sync.data.int("epoch") == 2, "\(sync.text)")
                #expect(trackIds(sync.data.objects("queue")).isEmpty, "\(sync.text)")
            }
            let snapshot = try await party.snapshot()
            #expect(snapshot.int("epoch") == 2)
            #expect(sameTrack(snapshot.object("currentTrack"), prTrack(2)), "\(snapshot)")
        }
    }

    @Test("A skip with an empty queue changes nothing and sends no stateSync")
    func skipWithAnEmptyQueueDoesNothing() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            try await party.play(prTrack(1))

            party.dj.socket.send("skip")
            try await party.dj.socket.roundTrip()
            try await party.marker(5)
            for person in party.everyone {
                let seen = await person.socket.summary()
                #expect(await person.socket.frames("stateSync").count == 1, "\(person.id): \(seen)")
            }
            let snapshot = try await party.snapshot()
            #expect(snapshot.int("epoch") == 1, "\(snapshot)")
            #expect(sameTrack(snapshot.object("currentTrack"), prTrack(1)), "\(snapshot)")
            #expect(snapshot.bool("isPlaying") == true)
        }
    }
}
