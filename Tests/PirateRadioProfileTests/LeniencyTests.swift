import Foundation
import Testing

/// What PirateRadio's own server (`server/index.js` of veganpolice/pirate-radi0) accepts, the
/// profile accepts too: each test is one of its handlers' leniencies, written from its code.
@Suite("PirateRadio: accepting what PirateRadio's server accepts")
struct LeniencyTests {
    /// A track as the PirateRadio app sends it: `albumArtURL` "" without art, `durationMs` 0 when unknown.
    static func appTrack(_ n: Int) -> JSONObject {
        ["id": "spotify:track:\(n)", "name": "Song \(n)", "artist": "Artist \(n)", "albumName": "Album \(n)", "albumArtURL": "", "durationMs": 0]
    }

    @Test("A seek to 1e300 neither crashes the server nor moves the track: the DJ gets a clear error, a member nothing")
    func hugeSeekDoesNotCrashTheServer() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            try await party.play(prTrack(1), positionMs: 500)
            let member = party.members[0].socket
            member.sendRaw(#"{"type":"seek","data":{"positionMs":1e300}}"#)
            party.dj.socket.sendRaw(#"{"type":"seek","data":{"positionMs":1e300,"ntpTimestamp":1e300}}"#)
            let error = try await party.dj.socket.next("error", "for the huge seek")
            #expect(error.data.string("message")?.contains("positionMs") == true, "\(error.text)")

            try await member.roundTrip()
            #expect(await member.frames("error").isEmpty, "a member's seek is ignored, as PirateRadio's server does")
            #expect(await member.frames("seek").isEmpty)
            let snapshot = try await party.snapshot()
            #expect(snapshot.bool("isPlaying") == true, "\(snapshot)")
            #expect(snapshot.int("positionMs") == 500, "\(snapshot)")
        }
    }

    @Test("addToQueue takes a track of just {id, name, durationMs}, the app's full track with durationMs 0, and a numeric nonce")
    func addToQueueNeedsNoFields() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let adder = party.members[0].socket
            let minimal: JSONObject = ["id": "spotify:track:1", "name": "Song 1", "durationMs": 180_000]
            adder.send("addToQueue", ["track": minimal, "nonce": "n-1"])
            adder.send("addToQueue", ["track": Self.appTrack(2), "nonce": 42])
            let update = try await party.dj.socket.next("queueUpdate", "with both") { $0.data.objects("queue")?.count == 2 }
            let queue = update.data.objects("queue") ?? []
            #expect(trackIds(queue) == ["spotify:track:1", "spotify:track:2"], "\(update.text)")
            #expect(queue.first?["artist"] == nil, "no artist is invented: \(update.text)")
            #expect(jsonInt(queue.last?["durationMs"]) == 0, "durationMs is shown as sent: \(update.text)")
            #expect(jsonInt(queue.last?["nonce"]) == 42, "the nonce is kept as sent: \(update.text)")
            await adder.expectNoErrors()
        }
    }

    @Test("A queue entry is the client's track as sent (extra fields too) with its nonce and addedBy, in queueUpdate, the snapshot and currentTrack")
    func queueEntriesKeepWhatTheClientSent() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            var track = prTrack(1)
            track["uri"] = "spotify:track:1"
            track["explicit"] = true
            track["addedBy"] = "someone else"
            party.members[0].socket.send("addToQueue", ["track": track, "nonce": "n-1"])
            var expected = track
            expected["nonce"] = "n-1"
            expected["addedBy"] = "m1"

            let update = try await party.dj.socket.next("queueUpdate")
            #expect(jsonEqual(update.data.objects("queue")?.first, expected), "\(update.text)")
            let snapshot = try await party.snapshot()
            #expect(jsonEqual(snapshot.objects("queue")?.first, expected), "\(snapshot)")

            party.dj.socket.send("skip")
            let sync = try await party.members[0].socket.next("stateSync", "after the skip") { !isJSONNull($0.data["currentTrack"]) }
            #expect(jsonEqual(sync.data.object("currentTrack"), expected), "\(sync.text)")
        }
    }

    @Test("A track whose text has control characters, or is longer than OpenJam's, is queued and shown as sent")
    func anyTrackTextIsQueued() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            var track = prTrack(1)
            track["name"] = "Line one\nLine\ttwo\u{7}"
            track["artist"] = String(repeating: "Orchestra ", count: 60)
            track["albumName"] = "Live\r\n"
            track["albumArtURL"] = "https://i.example/a\nb.jpg"
            party.members[0].socket.send("addToQueue", ["track": track, "nonce": "n-1"])
            var expected = track
            expected["nonce"] = "n-1"
            expected["addedBy"] = "m1"
            let update = try await party.dj.socket.next("queueUpdate")
            #expect(jsonEqual(update.data.objects("queue")?.first, expected), "\(update.text)")
            await party.members[0].socket.expectNoErrors()

            party.dj.socket.send("playPrepare", ["trackId": "spotify:track:1", "track": track])
            let prepared = try await party.members[0].socket.next("playPrepare")
            #expect(jsonEqual(prepared.data.object("track"), track), "\(prepared.text)")
            let snapshot = try await party.snapshot()
            #expect(jsonEqual(snapshot.object("currentTrack"), track), "\(snapshot)")
            await party.dj.socket.expectNoErrors()
        }
    }

    @Test("Queue entries and currentTrack keep what the client sent across a kill -9 and restart")
    func entriesKeepWhatTheClientSentAcrossARestart() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            var playing = prTrack(1)
            playing["uri"] = "spotify:track:1"
            var queued = prTrack(2)
            queued["explicit"] = true
            party.dj.socket.send("playPrepare", ["trackId": playing["id"] ?? "", "track": playing])
            _ = try await party.members[0].socket.next("playPrepare")
            party.members[0].socket.send("addToQueue", ["track": queued, "nonce": "n-2"])
            // Broadcast only once stored: from here on the add is acknowledged.
            _ = try await party.dj.socket.next("queueUpdate")
            var expected = queued
            expected["nonce"] = "n-2"
            expected["addedBy"] = "m1"
            try await server.afterKill { restarted in
                let snapshot = try await restarted.http.snapshot(party.dj.user, session: party.id)
                #expect(jsonEqual(snapshot.objects("queue")?.first, expected), "\(snapshot)")
                #expect(jsonEqual(snapshot.object("currentTrack"), playing), "\(snapshot)")
            }
        }
    }

    @Test("A nonce adds again once its track has left the queue, as PirateRadio's server checks only its queue")
    func aNonceAddsAgainOnceItsTrackLeftTheQueue() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let adder = party.members[0].socket
            _ = try await adder.addAndWait(prTrack(1), nonce: "same")
            party.dj.socket.send("skip")
            try await adder.next("stateSync", "after the skip") { !isJSONNull($0.data["currentTrack"]) }
            let again = try await adder.addAndWait(prTrack(1), nonce: "same")
            #expect(trackIds(again.data.objects("queue")) == ["spotify:track:1"], "\(again.text)")
        }
    }

    @Test("A track over 4 KiB of JSON is refused with a clear error; a track that is not an object too")
    func oversizedOrNonObjectTracksAreRefused() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: [])
            let dj = party.dj.socket
            var big = prTrack(1)
            big["padding"] = String(repeating: "x", count: 5000)
            dj.send("addToQueue", ["track": big, "nonce": "big"])
            let error = try await dj.next("error", "for the big track")
            #expect(error.data.string("message")?.contains("4096") == true, "\(error.text)")
            dj.send("addToQueue", ["track": "spotify:track:1", "nonce": "text"])
            let second = try await dj.next("error", "for a text track")
            #expect(second.data.string("message")?.contains("object") == true, "\(second.text)")
            #expect((try await party.snapshot().objects("queue"))?.isEmpty == true)
        }
    }

    @Test("A JSON message in a binary frame is read like a text one, as the app sends them")
    func binaryFramesAreRead() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            party.dj.socket.sendBinary("addToQueue", ["track": prTrack(1), "nonce": "binary"])
            let update = try await party.members[0].socket.next("queueUpdate")
            #expect(trackIds(update.data.objects("queue")) == ["spotify:track:1"], "\(update.text)")
            await party.dj.socket.expectNoErrors()
        }
    }

    @Test("playPrepare needs only a trackId: currentTrack is {id}; a track without artist is shown as sent")
    func playPrepareNeedsOnlyATrackId() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let member = party.members[0].socket
            let prepare: JSONObject = ["trackId": "spotify:track:7", "prepareDeadline": nowMs() + 1500]
            party.dj.socket.send("playPrepare", prepare)
            let relayed = try await member.next("playPrepare")
            #expect(jsonEqual(relayed.rawData, prepare), "\(relayed.text)")
            var snapshot = try await party.snapshot()
            #expect(jsonEqual(snapshot.object("currentTrack"), ["id": "spotify:track:7"]), "\(snapshot)")
            #expect(snapshot.int("epoch") == 1)

            let bare: JSONObject = ["id": "spotify:track:8", "name": "Song 8"]
            party.dj.socket.send("playPrepare", ["trackId": "spotify:track:8", "track": bare])
            try await member.next("playPrepare")
            snapshot = try await party.snapshot()
            #expect(jsonEqual(snapshot.object("currentTrack"), bare), "\(snapshot)")
            #expect(snapshot.int("epoch") == 2)
            await party.dj.socket.expectNoErrors()
        }
    }

    @Test("The app's playPrepare and playCommit sent back to back start the track; the commit needs no positionMs and 0 means now")
    func backToBackPrepareAndCommitPlay() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let before = nowMs()
            party.dj.socket.send("playPrepare", ["trackId": "spotify:track:7", "prepareDeadline": before + 1500])
            party.dj.socket.send("playCommit", ["trackId": "spotify:track:7", "ntpTimestamp": 0, "refSeq": 1])
            let commit = try await party.members[0].socket.next("playCommit")
            #expect(commit.data.string("trackId") == "spotify:track:7", "\(commit.text)")
            let snapshot = try await party.snapshot()
            #expect(snapshot.bool("isPlaying") == true, "\(snapshot)")
            #expect(snapshot.int("positionMs") == 0, "\(snapshot)")
            let anchor = try #require(snapshot.int("positionTimestamp"), "\(snapshot)")
            #expect(anchor >= before - 2_000 && anchor <= nowMs() + 2_000, "ntpTimestamp 0 reads as now, not as 1970: \(snapshot)")
            await party.dj.socket.expectNoErrors()
        }
    }

    @Test("playCommit, pause, resume and seek with nothing prepared are ignored without an error")
    func timelineWithoutATrackIsIgnored() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            for type in ["playCommit", "pause", "resume", "seek"] {
                party.dj.socket.send(type, ["positionMs": 1000, "ntpTimestamp": nowMs()])
            }
            try await party.marker(1)
            try await party.dj.socket.roundTrip()
            await party.dj.socket.expectNoErrors()
            let snapshot = try await party.snapshot()
            #expect(snapshot.isNull("currentTrack"), "\(snapshot)")
            #expect(snapshot.bool("isPlaying") == false, "\(snapshot)")
        }
    }

    @Test("The app's pause {ntpTimestamp} holds the track where it is and tells everyone that position")
    func pauseNeedsNoPosition() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            try await party.play(prTrack(1), positionMs: 10_000)
            party.dj.socket.send("pause", ["ntpTimestamp": nowMs()])
            let pause = try await party.members[0].socket.next("pause")
            let position = try #require(pause.data.int("positionMs"), "the pause says where: \(pause.text)")
            #expect(position >= 10_000 && position < 20_000, "\(pause.text)")
            let snapshot = try await party.snapshot()
            #expect(snapshot.bool("isPlaying") == false, "\(snapshot)")
            #expect(snapshot.int("positionMs") == position, "\(snapshot)")
        }
    }

    @Test("The app's resume {executionTime, ntpTimestamp} plays on from the paused position at executionTime")
    func resumeNeedsNoPosition() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            try await party.play(prTrack(1))
            party.dj.socket.send("pause", ["positionMs": 42_000, "ntpTimestamp": nowMs()])
            try await party.members[0].socket.next("pause")
            let at = nowMs() + 300
            party.dj.socket.send("resume", ["executionTime": at, "ntpTimestamp": at])
            let resume = try await party.members[0].socket.next("resume")
            #expect(resume.data.int("positionMs") == 42_000, "members learn the position: \(resume.text)")
            #expect(resume.data.int("executionTime") == at, "\(resume.text)")
            let snapshot = try await party.snapshot()
            #expect(snapshot.bool("isPlaying") == true, "\(snapshot)")
            // Shown as the same timeline at the server's now: the app cannot take an anchor ahead of its clock.
            let shownAt = try #require(snapshot.int("positionTimestamp"))
            #expect(shownAt <= nowMs(), "\(snapshot)")
            #expect(try #require(snapshot.int("positionMs")) + (at - shownAt) == 42_000, "\(snapshot)")
        }
    }

    @Test("A seek without positionMs goes to the start")
    func seekWithoutPositionGoesToTheStart() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            try await party.play(prTrack(1), positionMs: 30_000)
            party.dj.socket.send("seek", ["ntpTimestamp": nowMs()])
            try await party.members[0].socket.next("seek")
            let snapshot = try await party.snapshot()
            #expect(snapshot.int("positionMs") == 0, "\(snapshot)")
            await party.dj.socket.expectNoErrors()
        }
    }

    @Test("Text that is not JSON, a message without a type or with an unknown one is ignored without an answer")
    func unreadableMessagesAreIgnored() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: [])
            let dj = party.dj.socket
            for text in ["this is not json", "[1, 2]", #"{"data": {"positionMs": 1}}"#, #"{"type": 7}"#, #"{"type": "dance", "data": {}}"#] {
                dj.sendRaw(text)
            }
            try await dj.roundTrip()
            await dj.expectNoErrors()
            #expect(await dj.isClosed == false)
        }
    }

    @Test("data that is null or not an object reads as empty")
    func nonObjectDataReadsAsEmpty() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            party.members[0].socket.sendRaw(#"{"type": "driftReport", "data": null}"#)
            let report = try await party.dj.socket.next("driftReport")
            #expect(jsonEqual(report.rawData, ["fromUserId": "m1"]), "\(report.text)")
            party.members[0].socket.sendRaw(#"{"type": "ping", "data": "now"}"#)
            let pong = try await party.members[0].socket.next("pong")
            #expect(pong.data["clientSendTime"] == nil, "nothing to echo: \(pong.text)")
            #expect(jsonNumber(pong.data["serverTime"]) != nil, "\(pong.text)")
            #expect(await party.members[0].socket.frames("error").isEmpty)
        }
    }

    @Test("removeFromQueue takes out every entry with that id; an id not queued changes nothing and answers nothing")
    func removeFromQueueRemovesEveryMatch() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: [])
            let dj = party.dj.socket
            for (n, nonce) in [(1, "a"), (2, "b"), (1, "c")] {
                dj.send("addToQueue", ["track": prTrack(n), "nonce": nonce])
            }
            try await dj.next("queueUpdate", "with three") { $0.data.objects("queue")?.count == 3 }
            dj.send("removeFromQueue", ["trackId": "spotify:track:9"])
            dj.send("removeFromQueue", ["trackId": "spotify:track:1"])
            let update = try await dj.next("queueUpdate", "after the remove") { $0.data.objects("queue")?.count != 3 }
            #expect(trackIds(update.data.objects("queue")) == ["spotify:track:2"], "\(update.text)")
            try await dj.roundTrip()
            await dj.expectNoErrors()
        }
    }

    @Test("driftReport reaches the DJ with fromUserId set by the server, whatever the sender wrote there")
    func driftReportNamesItsSender() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let report: JSONObject = ["trackId": "spotify:track:1", "positionMs": 1234, "ntpTimestamp": nowMs(), "fromUserId": "dj"]
            party.members[0].socket.send("driftReport", report)
            let relayed = try await party.dj.socket.next("driftReport")
            var expected = report
            expected["fromUserId"] = "m1"
            #expect(jsonEqual(relayed.rawData, expected), "\(relayed.text)")
        }
    }

    @Test("ping echoes a clientSendTime of any type, and answers one without it")
    func pingEchoesAnyClientSendTime() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: [])
            let dj = party.dj.socket
            dj.send("ping", ["clientSendTime": "t-1"])
            let echoed = try await dj.next("pong")
            #expect(echoed.data.string("clientSendTime") == "t-1", "\(echoed.text)")
            dj.send("ping")
            let bare = try await dj.next("pong")
            #expect(bare.data["clientSendTime"] == nil, "\(bare.text)")
            #expect(jsonNumber(bare.data["serverTime"]) != nil, "\(bare.text)")
        }
    }

    @Test("POST /auth takes a long display name with control characters, cleaned and cut to 64 characters")
    func authCleansDisplayNames() async throws {
        try await PirateServer.with { server in
            let long = "DJ\u{7}\t" + String(repeating: "é", count: 100)
            let result = try await server.http.send("POST", "/auth", json: ["spotifyUserId": "dj", "displayName": long])
            #expect(result.status == 200, "\(result)")
            let token = try #require(result.json?.string("token"), "\(result)")
            let name = try #require(JWT.payload(token)?.string("name"))
            #expect(name.count == 64, "\(name)")
            #expect(name.hasPrefix("DJ"), "\(name)")
            #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(name)")
        }
    }

    @Test("POST /auth cuts a name of heavy characters to what a join takes, so its token can create and join")
    func authCutsHeavyNamesToWhatAJoinTakes() async throws {
        try await PirateServer.with { server in
            // 64 characters of one letter under ten accents each: 1,344 bytes, over the 512 a name may hold.
            let heavy = String(repeating: "a" + String(repeating: "\u{0301}", count: 10), count: 64)
            let result = try await server.http.send("POST", "/auth", json: ["spotifyUserId": "heavy", "displayName": heavy])
            let token = try #require(result.json?.string("token"), "\(result)")
            let name = try #require(JWT.payload(token)?.string("name"))
            #expect(name.utf8.count <= 512, "\(name.utf8.count) bytes")
            #expect(!name.isEmpty)
            let created = try await server.http.request("POST", "/sessions", token: token)
            #expect(created.status == 201, "\(created)")
        }
    }
}
