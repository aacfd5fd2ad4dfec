import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// A host's skip, seek, pause or resume names the song it was meant for: sent late (after a reconnect, say),
/// it does nothing to the song that plays by then.
@Suite struct StaleHostControlTests {
    @Test func aSkipOrSeekForASongThatHasEndedIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let host = party.host.socket
            for n in 1...3 { #expect(try await server.api.add(party.host.token, party.id, testTrack(n, durationMs: 3_600_000)).status == 201) }
            let first = try #require(try await server.api.view(party.host.token, party.id).nowPlaying)
            host.send(.skip(Skip(epoch: first.epoch)), id: "skip-first")
            _ = try await host.next("the first skip's ack") { $0.ack?.id == "skip-first" }
            let second = try #require(try await server.api.view(party.host.token, party.id).nowPlaying)
            #expect(second.item.track.id == "track-2")

            // The same skip again under a new id, and a seek, both for the first song.
            host.send(.skip(Skip(epoch: first.epoch)), id: "skip-late")
            let refused = try #require(try await host.next("the late skip's answer") { $0.ack?.id == "skip-late" || $0.error?.id == "skip-late" }.error)
            #expect(refused.code == .conflict)
            #expect(refused.message == "the song this was meant for is no longer playing; nothing changed")
            host.send(.seek(Seek(positionMs: 60_000, epoch: first.epoch)), id: "seek-late")
            let seekRefused = try #require(try await host.next("the late seek's answer") { $0.ack?.id == "seek-late" || $0.error?.id == "seek-late" }.error)
            #expect(seekRefused.code == .conflict)
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.nowPlaying?.item.track.id == "track-2", "the second song plays on")
            #expect(view.nowPlaying?.epoch == second.epoch)
            #expect(view.history.filter { $0.outcome == .skipped }.count == 1)

            // For the song that plays, both apply; without an epoch, as before, too.
            host.send(.seek(Seek(positionMs: 60_000, epoch: second.epoch)), id: "seek-now")
            _ = try await host.next("the seek's ack") { $0.ack?.id == "seek-now" }
            host.send(.skip(Skip()), id: "skip-any")
            _ = try await host.next("the plain skip's ack") { $0.ack?.id == "skip-any" }
            #expect(try await server.api.view(party.host.token, party.id).nowPlaying?.item.track.id == "track-3")
            await party.close()
        }
    }

    @Test func aPauseOrResumeForASongThatHasEndedIsRefusedAndLeavesTheNextSongAsItIs() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let host = party.host.socket
            for n in 1...2 { #expect(try await server.api.add(party.host.token, party.id, testTrack(n, durationMs: 3_600_000)).status == 201) }
            let first = try #require(try await server.api.view(party.host.token, party.id).nowPlaying)
            host.send(.pause(Pause(epoch: first.epoch)), id: "pause-first")
            _ = try await host.next("the first pause's ack") { $0.ack?.id == "pause-first" }
            host.send(.skip(Skip()), id: "skip")
            _ = try await host.next("the skip's ack") { $0.ack?.id == "skip" }
            let second = try #require(try await server.api.view(party.host.token, party.id).nowPlaying)
            #expect(second.item.track.id == "track-2")
            #expect(second.state != .paused)

            // Pressed for the first song while offline, sent after the reconnect.
            for (command, id) in [(ClientCommand.pause(Pause(epoch: first.epoch)), "pause-late"), (.resume(Pause(epoch: first.epoch)), "resume-late")] {
                host.send(command, id: id)
                let refused = try #require(try await host.next("\(id)'s answer") { $0.ack?.id == id || $0.error?.id == id }.error)
                #expect(refused.code == .conflict)
                #expect(refused.message == "the song this was meant for is no longer playing; nothing changed")
            }
            let after = try await server.api.view(party.host.token, party.id).nowPlaying
            #expect(after?.epoch == second.epoch)
            #expect(after?.state != .paused, "the second song plays on")

            // For the song that plays, both apply; without an epoch, as before, too.
            host.send(.pause(Pause(epoch: second.epoch)), id: "pause-now")
            _ = try await host.next("the pause's ack") { $0.ack?.id == "pause-now" }
            #expect(try await server.api.view(party.host.token, party.id).nowPlaying?.state == .paused)
            host.send(.resume(Pause()), id: "resume-any")
            _ = try await host.next("the plain resume's ack") { $0.ack?.id == "resume-any" }
            #expect(try await server.api.view(party.host.token, party.id).nowPlaying?.state != .paused)
            await party.close()
        }
    }

    @Test func restControlsWithTheEpochOfASongThatHasEndedAreRefusedAndChangeNothing() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Bob"])
            let (host, bob, base) = (party.host.token, party.guests[0].token, "/api/v1/sessions/\(party.id)")
            for n in 1...3 { #expect(try await server.api.add(host, party.id, testTrack(n, durationMs: 3_600_000)).status == 201) }
            let first = try #require(try await server.api.view(host, party.id).nowPlaying)
            #expect(try await server.api.request("POST", "\(base)/skip?epoch=\(first.epoch)", token: host).status == 200)
            let second = try #require(try await server.api.view(host, party.id).nowPlaying)
            #expect(second.item.track.id == "track-2")

            // Each sent again late, for the first song: 409, and the second song is as it was.
            let late: [(String, String, UpdateSessionRequest?)] = [
                ("POST", "skip", nil), ("POST", "skip-requests", nil), ("DELETE", "skip-requests", nil),
                ("PATCH", "", UpdateSessionRequest(playback: .pause)), ("PATCH", "", UpdateSessionRequest(seekMs: 60_000)),
                ("PATCH", "", UpdateSessionRequest(settings: SettingsPatch(locked: true), playback: .pause)),
            ]
            for (method, path, body) in late {
                let url = "\(base)\(path.isEmpty ? "" : "/" + path)?epoch=\(first.epoch)"
                let token = path.hasPrefix("skip-requests") ? bob : host
                let answer = if let body {
                    try await server.api.send(method, url, token: token, json: body)
                } else {
                    try await server.api.request(method, url, token: token)
                }
                #expect(answer.status == 409, "\(method) \(url): \(answer.text)")
                #expect(answer.text.contains("no longer playing"), "\(answer.text)")
            }
            let view = try await server.api.view(host, party.id)
            #expect(view.nowPlaying?.epoch == second.epoch)
            #expect(view.nowPlaying?.state != .paused)
            #expect(view.skipRequests.count == 0)
            #expect(view.session.settings.locked == false, "all or nothing: the settings beside a late pause stay")

            // For the song that plays, they apply.
            let now = "\(base)?epoch=\(second.epoch)"
            #expect(try await server.api.send("PATCH", now, token: host, json: UpdateSessionRequest(playback: .pause)).status == 200)
            #expect(try await server.api.view(host, party.id).nowPlaying?.state == .paused)
            #expect(try await server.api.request("POST", "\(base)/skip-requests?epoch=\(second.epoch)", token: bob).status == 200)
            await party.close()
        }
    }

    @Test func aRestEpochThatIsNoNumberOrNamesNoSongControlIsRefusedAsInvalid() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let (host, base) = (party.host.token, "/api/v1/sessions/\(party.id)")
            #expect(try await server.api.add(host, party.id, testTrack(1, durationMs: 3_600_000)).status == 201)
            for bad in ["-1", "x", "1.5", "99999999999999999999", "%2B0", ""] {
                let answer = try await server.api.request("POST", "\(base)/skip?epoch=\(bad)", token: host)
                #expect(answer.status == 400, "\(bad): \(answer.text)")
                #expect(answer.errorCode == .invalidField)
                #expect(answer.text.contains("epoch must be a non-negative integer"), "\(answer.text)")
            }
            let epoch = try #require(try await server.api.view(host, party.id).nowPlaying?.epoch)
            let locking = try await server.api.send("PATCH", "\(base)?epoch=\(epoch)", token: host, json: UpdateSessionRequest(settings: SettingsPatch(locked: true)))
            #expect(locking.status == 400)
            #expect(locking.text.contains("epoch names the song a pause, resume or seek is for"), "\(locking.text)")
            let view = try await server.api.view(host, party.id)
            #expect(view.session.settings.locked == false)
            #expect(view.history.isEmpty, "nothing was skipped")
            await party.close()
        }
    }

    @Test func aMembersSkipRequestForASongThatHasEndedIsRefusedAndCountsAgainstNothing() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Bob", "Cat"])
            // Every member must ask, so the requests below only count.
            party.host.socket.send(.updateSettings(SettingsPatch(skipThreshold: 1.0)), id: "threshold")
            _ = try await party.host.socket.next("the settings' ack") { $0.ack?.id == "threshold" }
            for n in 1...2 { #expect(try await server.api.add(party.host.token, party.id, testTrack(n, durationMs: 3_600_000)).status == 201) }
            let first = try #require(try await server.api.view(party.host.token, party.id).nowPlaying)
            party.host.socket.send(.skip(Skip()), id: "host-skip")
            _ = try await party.host.socket.next("the host's skip ack") { $0.ack?.id == "host-skip" }
            let second = try #require(try await server.api.view(party.host.token, party.id).nowPlaying)
            #expect(second.item.track.id == "track-2")

            // Bob's request for the first song arrives late (sent again after a reconnect).
            let bob = party.guests[0].socket
            bob.send(.requestSkip(Skip(epoch: first.epoch)), id: "late")
            let refused = try #require(try await bob.next("the late request's answer") { $0.ack?.id == "late" || $0.error?.id == "late" }.error)
            #expect(refused.code == .conflict)
            #expect(refused.message == "the song this was meant for is no longer playing; nothing changed")
            #expect(try await server.api.view(party.guests[0].token, party.id).skipRequests.count == 0)

            // For the song that plays, it counts; without an epoch, as before, too.
            bob.send(.requestSkip(Skip(epoch: second.epoch)), id: "now")
            _ = try await bob.next("the request's ack") { $0.ack?.id == "now" }
            let counted = try await server.api.view(party.guests[0].token, party.id).skipRequests
            #expect(counted.count == 1)
            #expect(counted.mine == true)
            party.guests[1].socket.send(.requestSkip(Skip()), id: "plain")
            _ = try await party.guests[1].socket.next("the plain request's ack") { $0.ack?.id == "plain" }
            #expect(try await server.api.view(party.host.token, party.id).skipRequests.count == 2)
            await party.close()
        }
    }
}
