import Foundation
import Testing

@Suite("PirateRadio: the queue")
struct QueueTests {
    @Test("addToQueue from anyone sends queueUpdate with PirateRadio track fields to everybody, without starting playback")
    func addToQueueBroadcastsQueueUpdate() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1", "m2"])
            let adder = party.members[0]
            let full = prTrack(1)
            var bare = prTrack(2, durationMs: nil)
            bare["albumName"] = nil
            bare["albumArtURL"] = nil

            adder.socket.send("addToQueue", ["track": full, "nonce": "n-1"])
            for person in party.everyone {
                let update = try await person.socket.next("queueUpdate")
                let queue = update.data.objects("queue") ?? []
                #expect(queue.count == 1, "\(person.id): \(update.text)")
                #expect(sameTrack(queue.first, full), "\(person.id): the queued track should keep its fields: \(update.text)")
            }
            adder.socket.send("addToQueue", ["track": bare, "nonce": "n-2"])
            for person in party.everyone {
                let update = try await person.socket.next("queueUpdate")
                let queue = update.data.objects("queue") ?? []
                #expect(trackIds(queue) == ["spotify:track:1", "spotify:track:2"], "\(person.id): \(update.text)")
                #expect(sameTrack(queue.last, bare), "\(person.id): optional fields may be absent or null: \(update.text)")
            }

            let snapshot = try await party.snapshot()
            let queue = snapshot.objects("queue") ?? []
            #expect(trackIds(queue) == ["spotify:track:1", "spotify:track:2"])
            #expect(sameTrack(queue.first, full), "\(queue)")
            #expect(snapshot.isNull("currentTrack"), "adding does not start playback: \(snapshot)")
            #expect(snapshot.bool("isPlaying") == false)
            #expect(snapshot.int("epoch") == 0)
        }
    }

    @Test("The same nonce twice queues the track once and sends one queueUpdate")
    func sameNonceIsIgnored() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let adder = party.members[0]
            adder.socket.send("addToQueue", ["track": prTrack(1), "nonce": "same-nonce"])
            adder.socket.send("addToQueue", ["track": prTrack(1), "nonce": "same-nonce"])
            // A marker from the same socket: once it is in, the repeat has been handled.
            adder.socket.send("addToQueue", ["track": prTrack(2), "nonce": "other-nonce"])
            for person in party.everyone {
                try await person.socket.next("queueUpdate", "with the marker") { trackIds($0.data.objects("queue")).contains("spotify:track:2") }
            }

            for person in party.everyone {
                let updates = await person.socket.frames("queueUpdate")
                let seen = await person.socket.summary()
                #expect(updates.count == 2, "\(person.id): one queueUpdate for the nonce, one for the marker: \(seen)")
                #expect(trackIds(updates.last?.data.objects("queue")) == ["spotify:track:1", "spotify:track:2"])
            }
            #expect(await adder.socket.frames("error").isEmpty, "a repeated nonce changes nothing and sends nothing")
            let queue = try await party.snapshot().objects("queue") ?? []
            #expect(trackIds(queue) == ["spotify:track:1", "spotify:track:2"])
        }
    }

    @Test("The queue holds at most 100 tracks: the 101st is dropped without an answer, as PirateRadio's server does")
    func queueIsCappedAt100() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: [])
            let dj = party.dj.socket
            for n in 1...101 {
                dj.send("addToQueue", ["track": prTrack(n), "nonce": "nonce-\(n)"])
            }
            try await dj.next("queueUpdate", timeout: .seconds(15), "with 100 tracks") { $0.data.objects("queue")?.count == 100 }
            try await dj.roundTrip()
            await dj.expectNoErrors()

            let updates = await dj.frames("queueUpdate")
            #expect(updates.count == 100, "\(updates.count) queueUpdates")
            #expect(updates.last?.data.objects("queue")?.count == 100)
            let queue = try await party.snapshot().objects("queue") ?? []
            #expect(queue.count == 100)
            #expect(!trackIds(queue).contains("spotify:track:101"))
            try await dj.roundTrip()
        }
    }

    @Test("The DJ removes a queued track by trackId; queueUpdate to everybody")
    func djRemovesFromQueue() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            for n in 1...3 { _ = try await party.members[0].socket.addAndWait(prTrack(n)) }
            party.dj.socket.send("removeFromQueue", ["trackId": "spotify:track:2"])
            for person in party.everyone {
                try await person.socket.next("queueUpdate", "without track 2") {
                    trackIds($0.data.objects("queue")) == ["spotify:track:1", "spotify:track:3"]
                }
            }
            let queue = try await party.snapshot().objects("queue") ?? []
            #expect(trackIds(queue) == ["spotify:track:1", "spotify:track:3"])
        }
    }

    @Test("removeFromQueue from a member who is not the DJ is dropped without an answer, even for their own track")
    func nonDJCannotRemoveFromQueue() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let member = party.members[0].socket
            _ = try await member.addAndWait(prTrack(1))
            try await party.dj.socket.next("queueUpdate")
            member.send("removeFromQueue", ["trackId": "spotify:track:1"])

            try await party.marker(2)
            await member.expectNoErrors()
            for person in party.everyone {
                let updates = await person.socket.frames("queueUpdate")
                let seen = await person.socket.summary()
                #expect(updates.allSatisfy { trackIds($0.data.objects("queue")).contains("spotify:track:1") },
                        "\(person.id): nothing was removed: \(seen)")
            }
            let queue = try await party.snapshot().objects("queue") ?? []
            #expect(trackIds(queue) == ["spotify:track:1", "spotify:track:2"])
        }
    }
}
