import Foundation
import Testing
import JamProtocol

struct RestBodyTests {
    @Test func everyRestBodyRoundTrips() throws {
        let guestRequest = GuestAuthRequest(displayName: "Alice")
        #expect(try roundTrip(guestRequest) == guestRequest)
        let guestResponse = GuestAuthResponse(userId: Sample.alice, displayName: "Alice", token: "a.b.c", expiresAt: 1_700_000_000_000)
        #expect(try roundTrip(guestResponse) == guestResponse)
        for create in [CreateSessionRequest(), CreateSessionRequest(name: "Party", displayName: "DJ", settings: SettingsPatch(locked: true, ordering: .fair))] {
            #expect(try roundTrip(create) == create)
        }
        for join in [JoinSessionRequest(code: "K7PQ2X"), JoinSessionRequest(code: "k7pq2x", displayName: "Bob")] {
            #expect(try roundTrip(join) == join)
        }
        for update in [
            UpdateSessionRequest(settings: SettingsPatch(skipThreshold: 0.3)),
            UpdateSessionRequest(playback: .pause),
            UpdateSessionRequest(settings: SettingsPatch(locked: false), playback: .resume, seekMs: 10, regenerateJoinCode: true),
        ] {
            #expect(try roundTrip(update) == update)
        }
        let add: AddToQueueRequest = AddToQueue(track: Sample.fullTrack, nonce: "n")
        #expect(try roundTrip(add) == add)
        #expect(try roundTrip(VoteRequest(value: -1)) == VoteRequest(value: -1))
        let voteResponse = VoteResponse(itemId: Sample.itemA, score: 4, myVote: 1)
        #expect(try roundTrip(voteResponse) == voteResponse)
        for role in Role.allCases { #expect(try roundTrip(RoleRequest(role: role)) == RoleRequest(role: role)) }
        #expect(try roundTrip(ServerTime(serverTime: Sample.t0)) == ServerTime(serverTime: Sample.t0))
        #expect(try roundTrip(Health(status: .ok, sessions: 3)) == Health(status: .ok, sessions: 3))
        let down = Health(status: .unavailable, sessions: 0, reason: "the database is unreachable")
        #expect(try roundTrip(down) == down)
        #expect(try roundTrip(Sample.view) == Sample.view)
        #expect(try roundTrip(Sample.emptyView) == Sample.emptyView)
        for control in PlaybackControl.allCases {
            #expect(try roundTrip([control]) == [control])
        }
    }

    @Test func emptyCreateBodyDecodes() throws {
        #expect(try WireCoding.decode(CreateSessionRequest.self, from: Data("{}".utf8)) == CreateSessionRequest())
    }

    @Test func joinWithoutCodeNamesTheField() {
        do {
            _ = try WireCoding.decode(JoinSessionRequest.self, from: Data(#"{"displayName":"Bob"}"#.utf8))
            Issue.record("a join without code decoded")
        } catch {
            #expect(error == JamError(.malformed, "missing field code"))
        }
    }

    @Test(arguments: ErrorCode.allCases)
    func errorBodyRoundTrips(_ code: ErrorCode) throws {
        let body = ErrorBody(JamError(code, "something specific about \(code.rawValue)"))
        #expect(try roundTrip(body) == body)
        #expect(body.error.code == code)
    }

    @Test func errorBodyHasTheDocumentedShape() throws {
        let body = ErrorBody(JamError(.notFound, "no session with code ABC123"))
        let text = String(decoding: try WireCoding.encode(body), as: UTF8.self)
        #expect(text == #"{"error":{"code":"notFound","message":"no session with code ABC123"}}"#)
        let decoded = try WireCoding.decode(ErrorBody.self, from: Data(#"{"error":{"message":"x","code":"gone"}}"#.utf8))
        #expect(decoded == ErrorBody(JamError(.gone, "x")))
    }

    @Test func unknownErrorCodeInBodyIsInvalidField() {
        do {
            _ = try WireCoding.decode(ErrorBody.self, from: Data(#"{"error":{"code":"teapot","message":"x"}}"#.utf8))
            Issue.record("an unknown error code decoded")
        } catch {
            #expect(error.code == .invalidField)
            #expect(error.message.hasPrefix("field error.code:"))
        }
    }

    @Test(arguments: [
        (ErrorCode.malformed, 400), (.unknownType, 400), (.invalidField, 400), (.tooLarge, 413), (.unauthorized, 401),
        (.forbidden, 403), (.notMember, 403), (.locked, 403), (.notFound, 404), (.duplicate, 409), (.sessionFull, 409),
        (.conflict, 409), (.gone, 410), (.queueLimit, 422), (.rateLimited, 429), (.internal, 500), (.unavailable, 503),
    ])
    func errorCodeMapsToItsHTTPStatus(_ code: ErrorCode, _ status: Int) {
        #expect(code.httpStatus == status)
    }

    @Test func errorCodesEncodeAsTheirNames() throws {
        #expect(ErrorCode.internal.rawValue == "internal")
        #expect(ErrorCode.unknownType.rawValue == "unknownType")
        #expect(String(decoding: try WireCoding.encode([ErrorCode.sessionFull]), as: UTF8.self) == #"["sessionFull"]"#)
    }

    @Test func jamErrorDescribesItself() {
        #expect(JamError(.gone, "the session has ended").description == "gone: the session has ended")
    }

    @Test func updateRequestMustChangeSomething() {
        #expect(throws: JamError(.invalidField, "the update must set settings, playback, seekMs or regenerateJoinCode")) {
            try UpdateSessionRequest().validate()
        }
        #expect(throws: JamError.self) { try UpdateSessionRequest(regenerateJoinCode: false).validate() }
        #expect(throws: JamError(.invalidField, "settings must change at least one setting")) {
            try UpdateSessionRequest(settings: SettingsPatch()).validate()
        }
    }

    @Test func updateRequestChecksRanges() throws {
        #expect(throws: JamError(.invalidField, "seekMs must not be negative, got -5")) {
            try UpdateSessionRequest(seekMs: -5).validate()
        }
        do {
            try UpdateSessionRequest(settings: SettingsPatch(maxMembers: 0)).validate()
            Issue.record("maxMembers 0 accepted")
        } catch {
            #expect(error.code == .invalidField)
            #expect(error.message.contains("settings.maxMembers"))
        }
        try UpdateSessionRequest(regenerateJoinCode: true).validate()
        try UpdateSessionRequest(playback: .play).validate()
        try UpdateSessionRequest(seekMs: 0).validate()
    }
}
