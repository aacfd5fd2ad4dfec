import Foundation
import Testing

@Suite("QueueIT: songs, votes and search")
struct SongTests {
    @Test("the first song added plays at once and later ones queue; the app's empty isrc and image_url are accepted")
    func addingQueuesAndTheFirstPlays() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            _ = try await api.hosting(ann, code: "PARTY")
            let first = try api.ok(try await api.add(ann, song(1)), "add 1")
            #expect(first.string("status") == "playing")
            #expect(isLowercaseUUID(first.string("id")))
            #expect(appDate(first.string("added_at")) != nil, "\(first)")
            #expect(first.int("votes") == 0)
            let track = try #require(first.object("song"))
            #expect(track.string("id") == "track1")
            #expect(track.string("isrc") == "", "isrc is never null: \(track)")
            #expect(track.isNull("image_url"), "an empty image_url comes back null: \(track)")
            #expect(track.string("artists") == "Artist 1")
            #expect(track.string("album") == "Album 1")
            #expect(track.int("duration_ms") == 200_000)
            #expect(track.string("source") == "spotify")
            #expect(first.object("added_by")?.string("id") == ann.id)
            #expect(first.object("added_by")?.bool("is_anonymous") == false)

            let second = try api.ok(
                try await api.add(ann, song(2, isrc: "USRC17607839", image: "https://img.example/2.jpg", source: "apple_music")), "add 2")
            #expect(second.string("status") == "queued")
            #expect(second.object("song")?.string("image_url") == "https://img.example/2.jpg")
            #expect(second.object("song")?.string("source") == "apple_music")
            #expect(second.object("song")?.string("isrc") == "USRC17607839")

            let current = try api.ok(try await api.current(ann), "current")
            #expect(current.object("current_song")?.string("id") == first.string("id"))
            #expect(current.objects("queue")?.map { $0.string("status") ?? "" } == ["playing", "queued"])
        }
    }

    @Test("adds are held to its backend's 30 a minute, not to OpenJam's own command budget")
    func addsFollowTheBackendsLimit() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            _ = try await api.hosting(ann, code: "PARTY")
            for n in 1...30 { _ = try api.ok(try await api.add(ann, song(n)), "add \(n)") }
            let refused = try await api.add(ann, song(31))
            #expect(refused.status == 429, "\(refused)")
        }
    }

    @Test("an add with bad fields is one 422 listing each, and changes nothing")
    func badSongsAreRefusedWithEveryReason() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            _ = try await api.hosting(ann, code: "PARTY")
            var bad = song(1, image: "not a url", source: "apple")
            bad["name"] = nil
            bad["duration_ms"] = -5
            let answer = try await api.add(ann, bad)
            #expect(answer.status == 422, "\(answer)")
            let detail = try #require(answer.json?.objects("detail"), "\(answer)")
            let byField = Dictionary(detail.map { (($0["loc"] as? [String])?.last ?? "", $0.string("type") ?? "") }, uniquingKeysWith: { a, _ in a })
            #expect(byField == [
                "name": "missing", "duration_ms": "greater_than_equal", "source": "literal_error", "image_url": "url_parsing",
            ], "\(detail)")
            #expect(detail.first { ($0["loc"] as? [String])?.last == "source" }?.string("msg") == "Input should be 'spotify' or 'apple_music'")
            // image_url is required, and read as its validator reads a URL ("" aside).
            for (image, type) in [(nil, "missing"), (NSNull() as Any, "url_type"), ("ftp://img.example/1.jpg", "url_scheme"), ("http://", "url_parsing")] {
                var song = song(2)
                song["image_url"] = image
                let refused = try await api.add(ann, song)
                #expect(refused.status == 422, "\(String(describing: image)): \(refused)")
                let only = refused.json?.objects("detail")?.map { ($0["loc"] as? [String] ?? [], $0.string("type") ?? "") }
                #expect(only?.count == 1 && only?.first?.0 == ["body", "image_url"] && only?.first?.1 == type, "\(refused)")
            }
            let current = try api.ok(try await api.current(ann), "current")
            #expect(current.objects("queue")?.isEmpty == true)
        }
    }

    @Test("what its backend accepts is added: empty id and name, duration_ms 0 (kept as unknown)")
    func addsItsBackendAcceptsAreAdded() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            _ = try await api.hosting(ann, code: "PARTY")
            var bare = song(1)
            (bare["id"], bare["name"], bare["artists"], bare["album"], bare["duration_ms"]) = ("", "", "", "", 0)
            let added = try api.ok(try await api.add(ann, bare), "add with empty fields")
            let track = try #require(added.object("song"))
            #expect(track.string("id") == "" && track.string("name") == "", "\(track)")
            #expect(track.int("duration_ms") == 0, "\(track)")
            var long = song(2)
            long["duration_ms"] = 25 * 3_600_000
            let queued = try api.ok(try await api.add(ann, long), "add over a day long")
            #expect(queued.object("song")?.int("duration_ms") == 0, "a duration over a day is kept as unknown")
            let current = try api.ok(try await api.current(ann), "current")
            #expect(current.objects("queue")?.count == 2)
        }
    }

    @Test("fields longer than OpenJam keeps, or with control characters, are one 422 in its validator's words, and change nothing")
    func overlongFieldsAreRefusedAsItsValidatorWould() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            _ = try await api.hosting(ann, code: "PARTY")
            var long = song(1)
            long["id"] = String(repeating: "i", count: 257)
            long["name"] = String(repeating: "n", count: 301)
            long["isrc"] = String(repeating: "C", count: 33)
            long["image_url"] = "https://img.example/" + String(repeating: "a", count: 2048)
            let answer = try await api.add(ann, long)
            #expect(answer.status == 422, "\(answer)")
            let detail = try #require(answer.json?.objects("detail"), "\(answer)")
            let byField = Dictionary(detail.map { (($0["loc"] as? [String])?.last ?? "", $0.string("type") ?? "") }, uniquingKeysWith: { a, _ in a })
            #expect(byField == ["id": "string_too_long", "name": "string_too_long", "isrc": "string_too_long", "image_url": "url_too_long"], "\(detail)")
            #expect(detail.first { ($0["loc"] as? [String])?.last == "name" }?.string("msg") == "String should have at most 300 characters")
            var control = song(3)
            control["artists"] = "Artist\u{7}"
            let refused = try await api.add(ann, control)
            #expect(refused.status == 422, "\(refused)")
            #expect(refused.json?.objects("detail")?.map { $0.string("type") ?? "" } == ["value_error"], "\(refused)")
            // Counted in code points, as its validator counts: 300 of them in four bytes each fit.
            var wide = song(2)
            wide["name"] = String(repeating: "🎵", count: 300)
            _ = try api.ok(try await api.add(ann, wide), "add a name of 300 code points")
            let current = try api.ok(try await api.current(ann), "current")
            #expect(current.objects("queue")?.count == 1, "only the song that fits is added")
        }
    }

    @Test("adding without a session is 400 User has no active session")
    func addingNeedsASession() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let answer = try await api.add(ann, song(1))
            #expect(answer.status == 400, "\(answer)")
            #expect(answer.error == "User has no active session")
        }
    }

    @Test("votes sent with upper-case ids count, replace each other and clear with DELETE")
    func votesWithUpperCaseIds() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            let playing = try await api.added(ann, song(1))
            let queued = try await api.added(ann, song(2))
            let up = try await api.vote(bob, queued, 1)
            #expect(up.status == 200, "\(up)")
            #expect(up.text == #"{"ok":true,"total_votes":1}"#)
            #expect(try api.ok(try await api.vote(ann, queued, 1), "ann").int("total_votes") == 2)
            #expect(try api.ok(try await api.vote(bob, queued, -1), "bob changes").int("total_votes") == 0)
            #expect(try api.ok(try await api.current(bob), "current").object("my_votes")?.int(queued) == -1)
            #expect(try api.ok(try await api.unvote(bob, queued), "unvote").int("total_votes") == 1)
            #expect(try api.ok(try await api.current(bob), "current").object("my_votes")?.isEmpty == true)
            // The app shows vote buttons on what plays, too.
            #expect(try api.ok(try await api.vote(bob, playing, 1), "vote on playing").int("total_votes") == 1)
            #expect(try api.ok(try await api.current(bob), "current").object("current_song")?.int("votes") == 1)
        }
    }

    @Test("a vote of 0 is a 422; a song outside the caller's session is 403; a malformed id is a 422")
    func badVotesAreRefused() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let cat = try await api.signIn("Cat")
            _ = try await api.hosting(ann, code: "PARTY")
            _ = try await api.added(ann, song(1))
            let queued = try await api.added(ann, song(2))
            let zero = try await api.vote(ann, queued, 0)
            #expect(zero.status == 422, "\(zero)")
            #expect(zero.json?.objects("detail")?.first?.string("msg") == "Input should be 1 or -1")
            _ = try await api.hosting(cat, code: "OTHER")
            let outside = try await api.vote(cat, queued, 1)
            #expect(outside.status == 403, "\(outside)")
            #expect(outside.error == "You don't have permission to perform this action. Make sure you've joined the session.")
            let malformed = try await api.send("POST", "/api/v1/songs/not-a-uuid/vote", as: ann, json: ["vote_value": 1])
            #expect(malformed.status == 422, "\(malformed)")
            #expect(try api.ok(try await api.current(ann), "current").objects("queue")?.first { $0.string("id") == queued }?.int("votes") == 0)
        }
    }

    @Test("clearing a vote answers 200 with the song's total whether or not there was one to clear, and a vote on a played song is 200 too")
    func clearingAVoteAlwaysAnswersTheTotal() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            _ = try await api.added(ann, song(1))
            let queued = try await api.added(ann, song(2))
            _ = try api.ok(try await api.vote(ann, queued, 1), "ann votes")
            // Bob never voted on it: there is nothing to delete, and the total stands.
            #expect(try api.ok(try await api.unvote(bob, queued), "nothing to clear").int("total_votes") == 1)
            // Song 2 plays, then ends: clearing a vote on a played song is not an error.
            _ = try api.ok(try await api.songFinished(ann), "song 1 ends")
            _ = try api.ok(try await api.songFinished(ann), "song 2 ends")
            #expect(try api.ok(try await api.unvote(bob, queued), "a played song").int("total_votes") == 1)
            // Nor is a vote on it (a screen behind the session): its total as it stands.
            let late = try await api.vote(bob, queued, -1)
            #expect(late.status == 200, "\(late)")
            #expect(late.text == #"{"ok":true,"total_votes":1}"#)
            // Without a session, its backend still answers (the caller has no vote left to count).
            let cat = try await api.signIn("Cat")
            let outside = try await api.unvote(cat, queued)
            #expect(outside.status == 200, "\(outside)")
            #expect(outside.text == #"{"ok":true,"total_votes":0}"#)
        }
    }

    @Test("the queue is sorted by votes, then by add time")
    func theQueueIsSortedByVotesThenAddTime() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            _ = try await api.added(ann, song(1))
            let two = try await api.added(ann, song(2))
            let three = try await api.added(bob, song(3))
            let four = try await api.added(bob, song(4))
            _ = try api.ok(try await api.vote(ann, four, 1), "vote four")
            let queue = try api.ok(try await api.current(ann), "current").objects("queue") ?? []
            #expect(queue.filter { $0.string("status") == "queued" }.map { $0.string("id") ?? "" } == [four, two, three])
        }
    }

    @Test("a song that loses a vote leads the songs of its new score, as in its backend's tiers")
    func aSongThatLosesAVoteLeadsItsNewTier() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            _ = try await api.added(ann, song(1))
            let two = try await api.added(ann, song(2))
            let three = try await api.added(bob, song(3))
            _ = try api.ok(try await api.vote(bob, three, 1), "bob votes three up")
            _ = try api.ok(try await api.unvote(bob, three), "and takes it back")
            let queue = try api.ok(try await api.current(ann), "current").objects("queue") ?? []
            let queued = queue.filter { $0.string("status") == "queued" }
            #expect(queued.map { $0.string("id") ?? "" } == [three, two], "song 3 fell to 0 and leads it")
            #expect(queued.map { $0.bool("entered_tier_by_gain") } == [false, true])
            _ = try api.ok(try await api.songFinished(ann), "song 1 ends")
            let current = try api.ok(try await api.current(ann), "current")
            #expect(current.object("current_song")?.string("id") == three, "the tier's order is the play order")
        }
    }

    @Test("search answers from the library in SearchResults' shape; a missing q or a limit of 51 is a 422")
    func searchUsesTheLibrary() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let all = try api.ok(try await api.request("GET", "/api/v1/spotify/search?q=a&limit=50", token: ann.token), "search")
            let tracks = try #require(all.objects("tracks"), "\(all)")
            #expect(!tracks.isEmpty)
            let first = try #require(tracks.first)
            let title = try #require(first.string("name"))
            for key in ["id", "isrc", "name", "artists", "album", "source"] { #expect(first.string(key) != nil, "\(key) in \(first)") }
            #expect(first.int("duration_ms").map { $0 > 0 } == true)
            #expect(first.string("source") == "spotify")
            let word = String(title.split(separator: " ").first ?? "")
            let narrowed = try api.ok(try await api.request("GET", "/api/v1/spotify/search?q=\(word)&limit=1", token: ann.token), "narrowed")
            #expect(narrowed.objects("tracks")?.count == 1)
            let missing = try await api.request("GET", "/api/v1/spotify/search", token: ann.token)
            #expect(missing.status == 422, "\(missing)")
            #expect(missing.json?.objects("detail")?.first?["loc"] as? [String] == ["query", "q"])
            let tooMany = try await api.request("GET", "/api/v1/spotify/search?q=a&limit=51", token: ann.token)
            #expect(tooMany.status == 422, "\(tooMany)")
            // A found track can be queued as the app would send it.
            _ = try await api.hosting(ann, code: "PARTY")
            var found = first
            found["image_url"] = ""
            #expect(try await api.add(ann, found).status == 200)
        }
    }
}
