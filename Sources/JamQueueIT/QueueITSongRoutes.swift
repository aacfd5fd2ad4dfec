import Foundation
import Hummingbird
import JamCore
import JamMedia
import JamProtocol
import JamServer

/// QueueIT's songs, votes and search (`/api/v1/songs/*`, `/api/v1/spotify/search`), and the
/// small routes its app and health checks call (`/api/v1/users/me`, `/api/v1/ping`).
struct QueueITSongRoutes {
    let edge: QueueITEdge
    let catalog: LibraryCatalog

    /// Its backend's per-user limits (requests per minute).
    static let addLimit = (count: 30, window: 60)
    static let voteLimit = (count: 60, window: 60)
    static let searchLimit = (count: 20, window: 60)

    /// The song in an add request, as OpenJam's track. What its backend accepts is accepted:
    /// empty strings (an empty `isrc` or `image_url`, what its app sends for a track without
    /// them, is left out), and a `duration_ms` of 0 or over a day, kept as unknown. OpenJam's
    /// length limits, and its refusal of control characters, are 422s in its validator's words.
    static func track(_ body: inout QueueITBody) throws -> Track {
        let idField = body.text("id", max: Track.maxIdLength, what: "a song id")
        let isrcField = body.text("isrc", max: Track.maxISRCLength, what: "an isrc")
        let nameField = body.text("name", max: Track.maxTextLength, what: "a song name")
        let artistsField = body.text("artists", max: Track.maxTextLength, what: "artists")
        let albumField = body.text("album", max: Track.maxTextLength, what: "an album")
        let durationField = body.integer("duration_ms", min: 0)
        let imageField = body.httpURL("image_url", max: Track.maxArtworkURLLength)
        let sourceField = body.choice("source", ["spotify", "apple_music"], fallback: "spotify")
        let (id, isrc, name, artists, album, duration, artwork, source) = try body.validated(
            idField, isrcField, nameField, artistsField, albumField, durationField, imageField, sourceField)
        return Track(
            id: id, name: name, artist: artists, album: album.isEmpty ? nil : album,
            durationMs: (1...Track.maxDurationMs).contains(duration) ? duration : nil, artworkURL: artwork,
            isrc: isrc.isEmpty ? nil : isrc, source: source == "apple_music" ? .appleMusic : .spotify)
    }

    /// The queued song named in the path: a UUID in any case (its app sends upper case).
    static func songId(_ context: JamRequestContext) throws -> ItemID {
        let raw = try context.parameters.require("queued_song_id")
        guard let id = JamID.uuid(raw) else {
            var error = QueueITError.validation([ValidationIssue(
                type: "uuid_parsing", loc: [.key("path"), .key("queued_song_id")],
                msg: "Input should be a valid UUID, invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-]",
                input: String(decoding: JSONWriter.encode(JSONValue.string(String(raw.prefix(64)))), as: UTF8.self))])
            error.message = "Validation error"
            throw error
        }
        return id
    }

    func register(on router: Router<JamRequestContext>) {
        router.post("api/v1/songs/add") { request, context in
            let identity = try edge.identity(context)
            // Its backend validates the body before its limiter counts the call: a 422 spends nothing.
            var body = try await QueueITBody.read(request, context: context)
            let track = try Self.track(&body)
            try await edge.limit("add", identity.userId, Self.addLimit)
            let session = try await edge.requireCurrentSession(of: identity.userId, else: QueueITError(.badRequest, "User has no active session"))
            let itemId = edge.registry.newID()
            let song = try await session.perform(.add(track: track, nonce: itemId.rawValue, itemId: itemId), by: identity.userId, budgeted: false) { state, _ -> QueueIT.QueuedSong? in
                if let current = state.current, current.item.id == itemId { return QueueITViews.song(current.item, status: "playing", in: state) }
                return state.queue.first { $0.id == itemId }.map { QueueITViews.song($0, status: "queued", in: state) }
            }.read
            guard let song else { throw QueueITError(.internalServerError, "Failed to build queued song response") }
            return try QueueITEdge.json(song)
        }

        router.post("api/v1/songs/:queued_song_id/vote") { request, context in
            let identity = try edge.identity(context)
            var body = try await QueueITBody.read(request, context: context)
            let literal = body.literal("vote_value", [1, -1])
            let value = try body.validated(literal)
            try await edge.limit("vote", identity.userId, Self.voteLimit)
            // After the limiter: its backend reads the song id in the handler.
            let itemId = try Self.songId(context)
            return try await vote(itemId, value: Int(value), by: identity.userId)
        }

        router.delete("api/v1/songs/:queued_song_id/vote") { _, context in
            let identity = try edge.identity(context)
            let itemId = try Self.songId(context)
            return try await removeVote(itemId, by: identity.userId)
        }

        router.get("api/v1/spotify/search") { request, context in
            let identity = try edge.identity(context)
            let (query, limit) = try Self.searchQuery(request.uri.queryParameters)
            try await edge.limit("search", identity.userId, Self.searchLimit)
            let library = await catalog.library
            let tracks = library.search(query, limit: limit).map { QueueITViews.track($0.wireTrack) }
            return try QueueITEdge.json(QueueIT.SearchResults(tracks: tracks))
        }

        router.get("api/v1/users/me") { _, context in
            let identity = try edge.identity(context)
            return try QueueITEdge.json(QueueITViews.user(identity.userId, name: identity.displayName))
        }

        // Its app's "delete account" ends with this, and signs out only on its 204. A guest here
        // has no account beyond its token: what it holds is its place in a session.
        router.delete("api/v1/users/me") { _, context in
            let identity = try edge.identity(context)
            try await edge.leaveCurrentSession(identity.userId)
            return Response(status: .noContent)
        }

        router.get("api/v1/ping") { _, context in
            _ = try edge.identity(context)
            return try QueueITEdge.json(QueueIT.OK())
        }

        // Two routes its backend has and its app does not call: a token check, and a
        // placeholder that answers {"ok": true}. Here so a client that does gets what it would.
        router.get("api/v1/secure-test") { _, context in
            let identity = try edge.identity(context)
            return try QueueITEdge.json(QueueIT.SecureTest(userId: identity.userId.rawValue))
        }

        router.get("api/v1/songs/my-songs") { _, context in
            _ = try edge.identity(context)
            return try QueueITEdge.json(QueueIT.OK())
        }
    }

    /// Sets the caller's vote (0 clears it) on a song of their current session.
    private func vote(_ itemId: ItemID, value: Int, by user: UserID) async throws -> Response {
        let session = try await edge.requireCurrentSession(of: user, else: .notInSession)
        let outcome: Outcome
        do throws(JamError) {
            outcome = try await session.perform(.vote(itemId: itemId, value: value), by: user, budgeted: false)
        } catch {
            guard error.code == .notFound else { throw error }
            // A song of the session that has played: its backend takes the vote (any song of the
            // caller's session may be voted on) and it changes nothing that still plays. The
            // app's screen can be that far behind, so it is answered, with the song's total.
            let played = try await Self.playedScore(itemId, in: session)
            // Its database refuses a vote on a song outside the caller's session the same way.
            guard let played else { throw QueueITError.notInSession }
            return try QueueITEdge.json(QueueIT.VoteResponse(totalVotes: played))
        }
        return try QueueITEdge.json(QueueIT.VoteResponse(totalVotes: outcome.score ?? 0))
    }

    /// The stored total of `itemId` when it is a song of `session` that has played; nil otherwise.
    private static func playedScore(_ itemId: ItemID, in session: LiveSession) async throws -> Int? {
        try await session.readStored { state, _ in state.history.last { $0.item.id == itemId }?.item.score }
    }

    /// Clears the caller's vote. Its backend deletes the caller's vote row, if there is one, and
    /// answers with the song's total either way: without a session, or for a song that has
    /// played or is in another session, that is 200 too (the total as last known, or 0).
    private func removeVote(_ itemId: ItemID, by user: UserID) async throws -> Response {
        guard let session = try await edge.currentSession(of: user) else {
            return try QueueITEdge.json(QueueIT.VoteResponse(totalVotes: 0))
        }
        let total: Int
        do throws(JamError) {
            total = try await session.perform(.vote(itemId: itemId, value: 0), by: user, budgeted: false).score ?? 0
        } catch {
            guard error.code == .notFound else { throw error }
            total = try await Self.playedScore(itemId, in: session) ?? 0
        }
        return try QueueITEdge.json(QueueIT.VoteResponse(totalVotes: total))
    }

    /// `q` (at least one character) and `limit` (1–50, default 10), or a 422 listing what is wrong.
    static func searchQuery(_ parameters: Parameters) throws -> (String, Int) {
        var issues: [ValidationIssue] = []
        let q = parameters["q"].map(String.init)
        if q == nil {
            issues.append(ValidationIssue(type: "missing", loc: [.key("query"), .key("q")], msg: "Field required", input: "null"))
        } else if q?.isEmpty == true {
            issues.append(ValidationIssue(
                type: "string_too_short", loc: [.key("query"), .key("q")], msg: "String should have at least 1 character", input: "\"\"",
                ctx: #"{"min_length": 1}"#))
        }
        var limit = 10
        if let text = parameters["limit"].map(String.init) {
            let input = String(decoding: JSONWriter.encode(JSONValue.string(String(text.prefix(64)))), as: UTF8.self)
            if let value = Int(text) {
                if value < 1 {
                    issues.append(ValidationIssue(
                        type: "greater_than_equal", loc: [.key("query"), .key("limit")], msg: "Input should be greater than or equal to 1", input: input,
                        ctx: #"{"ge": 1}"#))
                } else if value > 50 {
                    issues.append(ValidationIssue(
                        type: "less_than_equal", loc: [.key("query"), .key("limit")], msg: "Input should be less than or equal to 50", input: input,
                        ctx: #"{"le": 50}"#))
                } else {
                    limit = value
                }
            } else {
                issues.append(ValidationIssue(
                    type: "int_parsing", loc: [.key("query"), .key("limit")], msg: "Input should be a valid integer, unable to parse string as an integer",
                    input: input))
            }
        }
        guard issues.isEmpty, let q else { throw QueueITError.validation(issues) }
        return (q, limit)
    }
}
