import Foundation
import Testing

@Suite("QueueIT: skips and the host's controls")
struct SkipAndControlTests {
    @Test("a skip request skips once more than half of the participants ask")
    func skipRequestsPastHalfSkip() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            let cat = try await api.signIn("Cat")
            _ = try await api.hosting(ann, code: "PARTY")
            _ = try api.ok(try await api.join(bob, code: "PARTY"), "join bob")
            _ = try api.ok(try await api.join(cat, code: "PARTY"), "join cat")
            let playing = try await api.added(ann, song(1))
            let next = try await api.added(ann, song(2))

            let one = try await api.requestSkip(bob)
            #expect(one.text == #"{"ok":true,"participant_count":3,"skip_request_count":1,"skipped":false}"#, "\(one)")
            // Asking twice counts once.
            #expect(try api.ok(try await api.requestSkip(bob), "again").int("skip_request_count") == 1)
            let bobsView = try api.ok(try await api.current(bob), "current")
            #expect(bobsView.bool("user_requested_skip") == true)
            #expect(bobsView.int("skip_request_count") == 1)

            let two = try api.ok(try await api.requestSkip(cat), "cat")
            #expect(two.bool("skipped") == true)
            #expect(two.int("skip_request_count") == 0)
            let after = try api.ok(try await api.current(ann), "current")
            #expect(after.object("current_song")?.string("id") == next)
            #expect(after.bool("last_skip_was_crowdsourced") == true)
            #expect(after.objects("queue")?.first { $0.string("id") == playing }?.string("status") == "skipped")
        }
    }

    @Test("a participant who leaves keeps their skip request counted; leaving checks nothing")
    func skipRequestsOutliveLeaving() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob, cat, dan) = try await api.partyOfFour()
            let playing = try await api.added(ann, song(1))
            _ = try await api.added(ann, song(2))

            _ = try api.ok(try await api.requestSkip(bob), "bob")
            _ = try api.ok(try await api.requestSkip(cat), "cat")
            // Two of four: not more than half. Dan leaves: two of three would be, but the
            // backend checks only when somebody asks.
            _ = try api.ok(try await api.leave(dan), "dan leaves")
            _ = try api.ok(try await api.leave(bob), "bob leaves")
            let view = try api.ok(try await api.current(ann), "current")
            #expect(view.object("current_song")?.string("id") == playing, "leaving skipped nothing")
            #expect(view.int("participant_count") == 2)
            #expect(view.int("skip_request_count") == 2, "bob's request still counts: \(view)")

            // Bob comes back: his request is his again, and counted once.
            let back = try api.ok(try await api.join(bob, code: "PARTY"), "bob again")
            #expect(back.bool("user_requested_skip") == true)
            #expect(back.int("skip_request_count") == 2)
            #expect(back.int("participant_count") == 3)
            let three = try api.ok(try await api.requestSkip(ann), "ann")
            #expect(three.bool("skipped") == true)
        }
    }

    @Test("a crowd's skip of the last song stays the crowd's when an add starts the next, and a host's skip clears it")
    func theCrowdsFlagOutlivesAnAutoPlay() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            _ = try await api.added(ann, song(1))
            _ = try api.ok(try await api.requestSkip(ann), "ann")
            #expect(try api.ok(try await api.requestSkip(bob), "bob").bool("skipped") == true)
            let emptied = try api.ok(try await api.current(bob), "current")
            #expect(emptied.object("current_song") == nil, "\(emptied)")
            #expect(emptied.bool("last_skip_was_crowdsourced") == true)

            // The add plays at once, as the backend's auto-play does, without touching the flag.
            let next = try await api.added(bob, song(2))
            let playing = try api.ok(try await api.current(bob), "current")
            #expect(playing.object("current_song")?.string("id") == next)
            #expect(playing.bool("last_skip_was_crowdsourced") == true, "\(playing)")

            _ = try await api.added(bob, song(3))
            _ = try api.ok(try await api.control(ann, ["skip_current_track": true]), "host skips")
            #expect(try api.ok(try await api.current(bob), "current").bool("last_skip_was_crowdsourced") == false)
        }
    }

    @Test("asking again counts again: a request a leaver's departure left over half skips when repeated")
    func aRepeatedRequestSkipsOnceALeaverMadeItEnough() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob, cat, dan) = try await api.partyOfFour()
            _ = try await api.added(ann, song(1))
            let next = try await api.added(ann, song(2))
            _ = try api.ok(try await api.requestSkip(bob), "bob")
            _ = try api.ok(try await api.requestSkip(cat), "cat")
            _ = try api.ok(try await api.leave(dan), "dan leaves")
            // Two of three: more than half, found when somebody asks, Bob again included.
            let again = try await api.requestSkip(bob)
            #expect(again.text == #"{"ok":true,"participant_count":3,"skip_request_count":0,"skipped":true}"#, "\(again)")
            #expect(try api.ok(try await api.current(ann), "current").object("current_song")?.string("id") == next)
        }
    }

    @Test("the host's skip_current_track marks the song skipped and plays the next; a guest's is 403")
    func hostSkips() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            let playing = try await api.added(bob, song(1))
            let next = try await api.added(bob, song(2))
            let guest = try await api.control(bob, ["skip_current_track": true])
            #expect(guest.status == 403, "\(guest)")
            #expect(guest.error == "You are not the host of this session")
            let skipped = try await api.control(ann, ["skip_current_track": true])
            #expect(skipped.text == #"{"ok":true}"#, "\(skipped)")
            let current = try api.ok(try await api.current(ann), "current")
            #expect(current.object("current_song")?.string("id") == next)
            #expect(current.bool("last_skip_was_crowdsourced") == false)
            #expect(current.objects("queue")?.first { $0.string("id") == playing }?.string("status") == "skipped")
            // An empty body changes nothing; a missing one is a 422.
            #expect(try await api.control(ann, [:]).text == #"{"ok":true}"#)
            #expect(try await api.request("PATCH", "/api/v1/sessions/control_session", token: ann.token).status == 422)
            #expect(try await api.control(ann, ["is_locked": "maybe"]).status == 422)
        }
    }

    @Test("song_finished marks the song played and plays the next; only the host may say so")
    func songFinishedMovesOn() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            let first = try await api.added(bob, song(1))
            let second = try await api.added(bob, song(2))
            #expect(try await api.songFinished(bob).status == 403)
            #expect(try await api.songFinished(ann).text == #"{"ok":true}"#)
            var current = try api.ok(try await api.current(ann), "current")
            #expect(current.object("current_song")?.string("id") == second)
            let played = try #require(current.objects("queue")?.first { $0.string("id") == first })
            #expect(played.string("status") == "played")
            #expect(played.isNull("last_entered_tier_at"), "written as null, as its backend does: \(played)")
            #expect(try await api.songFinished(ann).status == 200)
            current = try api.ok(try await api.current(ann), "current")
            #expect(current.isNull("current_song"))
            // Nothing plays: a repeated finish is harmless.
            #expect(try await api.songFinished(ann).status == 200)
            let none = try await api.songFinished(try await api.signIn("Cat"))
            #expect(none.status == 404)
            #expect(none.error == "No active session")
        }
    }

    @Test("a host who leaves stays the session's host: nobody takes over, and joining again they control it")
    func aHostWhoLeavesStaysHost() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            _ = try await api.added(bob, song(1))
            #expect(try await api.leave(ann).text == #"{"ok":true}"#)
            let meanwhile = try api.ok(try await api.current(bob), "current")
            #expect(meanwhile.object("session")?.object("host")?.string("id") == ann.id)
            #expect(try await api.songFinished(bob).status == 403, "Bob does not become host")
            let cat = try await api.signIn("Cat")
            _ = try api.ok(try await api.join(cat, code: "PARTY"), "join cat")
            #expect(try await api.songFinished(cat).status == 403, "nor does somebody arriving")
            _ = try api.ok(try await api.join(ann, code: "PARTY"), "ann again")
            #expect(try await api.songFinished(ann).text == #"{"ok":true}"#)
            #expect(try api.ok(try await api.current(cat), "current").object("session")?.object("host")?.string("id") == ann.id)
        }
    }

    @Test("is_locked stops guests adding until it is lifted; hosts still add")
    func lockAndPause() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            _ = try await api.added(ann, song(1))
            #expect(try await api.control(ann, ["is_locked": true, "pause_playback": true]).status == 200)
            let refused = try await api.add(bob, song(2))
            #expect(refused.status == 403, "\(refused)")
            #expect(refused.error?.contains("locked") == true)
            #expect(try await api.add(ann, song(3)).status == 200, "hosts still add")
            #expect(try await api.control(ann, ["is_locked": false, "pause_playback": false]).status == 200)
            #expect(try await api.add(bob, song(2)).status == 200)
        }
    }
}
