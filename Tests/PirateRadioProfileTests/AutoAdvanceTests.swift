import Foundation
import Testing

@Suite("PirateRadio: auto-advance")
struct AutoAdvanceTests {
    static var head: JSONObject { prTrack(2) }

    @Test("When a track with a duration ends, the queue head plays from 0 in the next epoch and everybody gets a stateSync")
    func endOfTrackAdvancesToTheQueueHead() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            _ = try await party.dj.socket.addAndWait(Self.head)
            let started = try await party.play(prTrack(1, durationMs: 800))

            for person in party.everyone {
                let sync = try await person.socket.next("stateSync", timeout: .seconds(30), "advancing to track 2") {
                    $0.data.object("currentTrack")?.string("id") == "spotify:track:2"
                }
                let elapsed = milliseconds(from: started, to: sync.receivedAt)
                #expect(elapsed >= 550, "\(person.id): advanced after \(elapsed) ms of an 800 ms track")
                #expect(sameTrack(sync.data.object("currentTrack"), Self.head), "\(sync.text)")
                #expect(sync.data.bool("isPlaying") == true, "\(sync.text)")
                #expect(sync.data.int("positionMs") == 0, "\(sync.text)")
                #expect(sync.data.int("epoch") == 2, "prepare made epoch 1, the advance makes 2: \(sync.text)")
                #expect(sync.epoch == 2, "\(sync.text)")
                #expect(trackIds(sync.data.objects("queue")).isEmpty, "the head left the queue: \(sync.text)")
            }
            let snapshot = try await party.snapshot()
            #expect(sameTrack(snapshot.object("currentTrack"), Self.head), "\(snapshot)")
            #expect(snapshot.bool("isPlaying") == true)
            #expect(snapshot.int("epoch") == 2)
        }
    }

    @Test("When a track ends with an empty queue, the stateSync says not playing and keeps the last track")
    func endOfTrackWithEmptyQueueStops() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let track = prTrack(1, durationMs: 700)
            let started = try await party.play(track)

            for person in party.everyone {
                let sync = try await person.socket.next("stateSync", timeout: .seconds(30), "after the end of the only track") { _ in true }
                let elapsed = milliseconds(from: started, to: sync.receivedAt)
                #expect(elapsed >= 450, "\(person.id): stopped after \(elapsed) ms of a 700 ms track")
                #expect(sync.data.bool("isPlaying") == false, "\(sync.text)")
                #expect(sameTrack(sync.data.object("currentTrack"), track), "the last track is kept: \(sync.text)")
            }
            let snapshot = try await party.snapshot()
            #expect(snapshot.bool("isPlaying") == false, "\(snapshot)")
            #expect(sameTrack(snapshot.object("currentTrack"), track), "\(snapshot)")
        }
    }

    @Test("After the queue ran out, the DJ's play replays the last track from where its commit started it")
    func playAfterTheQueueRanOutReplaysTheLastTrack() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let track = prTrack(1, durationMs: 700)
            try await party.play(track)
            for person in party.everyone {
                _ = try await person.socket.next("stateSync", timeout: .seconds(30), "after the end of the only track") { _ in true }
            }
            let ended = try await party.snapshot()
            #expect(ended.bool("isPlaying") == false, "\(ended)")
            #expect(ended.int("positionMs") == 0, "held where the commit set it, as its server keeps it: \(ended)")

            // The app's play button: resume {executionTime, ntpTimestamp}, no position. Well
            // ahead, so the 700 ms track still plays when the snapshot is read on a slow machine.
            let at = nowMs() + 5_000
            party.dj.socket.send("resume", ["executionTime": at, "ntpTimestamp": at])
            for person in party.everyone {
                let resume = try await person.socket.next("resume")
                #expect(resume.data.int("positionMs") == 0, "\(person.id): from the start, not the end: \(resume.text)")
            }
            let replaying = try await party.snapshot()
            #expect(replaying.bool("isPlaying") == true, "\(replaying)")
            #expect(sameTrack(replaying.object("currentTrack"), track), "\(replaying)")
        }
    }

    @Test("A pause cancels the end-of-track timer; a resume re-arms it for the rest of the track")
    func pauseCancelsAndResumeRearmsTheTimer() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            _ = try await party.dj.socket.addAndWait(Self.head)
            let started = try await party.play(prTrack(1, durationMs: 3000))

            try await Task.sleep(until: started + .milliseconds(300))
            party.dj.socket.send("pause", ["positionMs": 2400, "ntpTimestamp": nowMs()])
            try await party.members[0].socket.next("pause")

            // Well past the end the track would have had without the pause.
            try await Task.sleep(until: started + .milliseconds(3600))
            for person in party.everyone {
                let seen = await person.socket.summary()
                #expect(await person.socket.frames("stateSync").count == 1, "\(person.id): advanced while paused: \(seen)")
            }
            let paused = try await party.snapshot()
            #expect(sameTrack(paused.object("currentTrack"), prTrack(1, durationMs: 3000)), "\(paused)")
            #expect(paused.bool("isPlaying") == false)

            let resumed = ContinuousClock.now
            let resumedAt = nowMs()
            party.dj.socket.send("resume", ["positionMs": 2400, "ntpTimestamp": resumedAt])
            for person in party.everyone {
                let sync = try await person.socket.next("stateSync", timeout: .seconds(30), "advancing after the resume") {
                    $0.data.object("currentTrack")?.string("id") == "spotify:track:2"
                }
                let elapsed = milliseconds(from: resumed, to: sync.receivedAt)
                #expect(elapsed >= 300, "\(person.id): advanced \(elapsed) ms after the resume; 600 ms were left")
                // When the server advanced, by its own clock in the frame: just under the failure it
                // guards (the whole 3000 ms track again), and unlike the arrival time not moved by a
                // busy machine's late store or delivery.
                let advancedAfter = try #require(sync.timestamp) - resumedAt
                #expect(advancedAfter < 2_700, "\(person.id): advanced \(advancedAfter) ms after the resume; only 600 ms were left, not the full 3000")
                #expect(sync.data.bool("isPlaying") == true)
                #expect(sync.data.int("positionMs") == 0)
            }
        }
    }

    @Test("A track without a duration never auto-advances")
    func trackWithoutDurationNeverAdvances() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            _ = try await party.dj.socket.addAndWait(Self.head)
            let track = prTrack(1, durationMs: nil)
            let started = try await party.play(track)

            try await Task.sleep(until: started + .milliseconds(1500))
            for person in party.everyone {
                let seen = await person.socket.summary()
                #expect(await person.socket.frames("stateSync").count == 1, "\(person.id): \(seen)")
            }
            let snapshot = try await party.snapshot()
            #expect(sameTrack(snapshot.object("currentTrack"), track), "\(snapshot)")
            #expect(snapshot.bool("isPlaying") == true)
            #expect(snapshot.int("epoch") == 1)
            #expect(trackIds(snapshot.objects("queue")) == ["spotify:track:2"])
        }
    }
}
