import Foundation
import HTTPTypes
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// Per-address caps: open connections and sockets, and API requests without a valid token.
@Suite struct AddressLimitsTests {
    @Test func anAddressPastItsSocketCapIsRefusedWith4429UntilOneOfItsSocketsCloses() async throws {
        try await TestServer.with(configure: { $0.maxSocketsPerAddress = 2 }) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let extra = try await server.api.guest("Fay")
            _ = try await server.api.join(extra.token, code: party.session.session.joinCode)
            let third = TestSocket(server: server, session: party.id, token: extra.token)
            let refusal = try #require(try await third.next(.error).error)
            #expect(refusal.code == .rateLimited)
            #expect(refusal.message.contains("too many open sockets") && refusal.message.contains("2"), "\(refusal.message)")
            #expect(try await third.closedByServer()?.closeCode == .init(codeNumber: 4429))

            await party.guests[0].socket.close()
            // The closed socket's slot comes free once the server has seen the close.
            var admitted = false
            for _ in 0..<50 where !admitted {
                let retry = TestSocket(server: server, session: party.id, token: extra.token)
                let first = try await retry.next("first frame") { $0.stateSync != nil || $0.error != nil }
                admitted = first.stateSync != nil
                await retry.close()
                if !admitted { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(admitted, "a socket was refused after the address dropped below its cap")
            await party.host.socket.close()
        }
    }

    @Test(arguments: [false, true])
    func socketsRefusedForTheirTokenOrMembershipHoldNoSlotOfTheAddress(signedIn: Bool) async throws {
        try await TestServer.with(configure: { $0.maxSocketsPerAddress = 2 }) { server in
            let party = try await Party.start(server, guests: [])
            await party.host.socket.close()
            // Strangers on the same address open sockets without a token (or with a token of
            // somebody who is no member) and never answer the close: each would otherwise hold
            // its slot for the close's grace period.
            let stranger = try await server.api.guest("Stranger")
            let token = signedIn ? "Authorization: Bearer \(stranger.token)\r\n" : ""
            var strangers: [RawConnection] = []
            for _ in 0..<4 {
                let raw = try await RawConnection(port: server.port)
                try await raw.send("GET /api/v1/sessions/\(party.id)/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n\(token)\(UpgradeRequestTests.webSocket)\r\n")
                _ = await raw.received { String(decoding: $0, as: UTF8.self).contains("101 Switching Protocols") }
                strangers.append(raw)
            }
            for n in 0..<2 {
                let member = TestSocket(server: server, session: party.id, token: party.host.token)
                let first = try await member.next("first frame") { $0.stateSync != nil || $0.error != nil }
                #expect(first.stateSync != nil, "the member's socket \(n + 1) was refused: \(String(describing: first.error))")
            }
            for raw in strangers { await raw.close() }
        }
    }

    @Test func anAddressPastItsConnectionCapIsClosedAtOnceUntilOneOfItsConnectionsCloses() async throws {
        try await TestServer.with(configure: { $0.maxConnectionsPerAddress = 3; $0.maxSocketsPerAddress = nil }) { server in
            var open: [RawConnection] = []
            for n in 0..<3 {
                let connection = try await RawConnection(port: server.port)
                #expect(await Self.isServed(connection), "connection \(n + 1) of 3")
                open.append(connection)
            }
            let fourth = try await RawConnection(port: server.port)
            #expect(await fourth.closedByServer(within: .seconds(5)), "the address holds its 3 connections")
            #expect(await Self.isServed(open[0]), "the three it holds are still served")

            await open[1].close()
            // The closed connection's slot comes free once the server has seen the close.
            var admitted = false
            for _ in 0..<50 where !admitted {
                let retry = try await RawConnection(port: server.port)
                admitted = await Self.isServed(retry)
                if admitted { open[1] = retry } else { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(admitted, "a connection was closed after the address dropped below its cap")
            for connection in open { await connection.close() }
        }
    }

    @Test func theConnectionCapFollowsTheSocketCapUnlessSet() {
        var configuration = ServerConfiguration()
        #expect(configuration.maxConnectionsPerAddress == 2_048, "8 × the 256 sockets")
        configuration.maxSocketsPerAddress = 5_000
        #expect(configuration.maxConnectionsPerAddress == 40_000, "a raised socket cap takes the connections with it")
        configuration.maxSocketsPerAddress = 1
        #expect(configuration.maxConnectionsPerAddress == 2_048, "a small socket cap leaves the page its HTTP connections")
        configuration.maxSocketsPerAddress = nil
        #expect(configuration.maxConnectionsPerAddress == nil, "no socket cap, no connection cap")
        configuration.maxConnectionsPerAddress = 3
        configuration.maxSocketsPerAddress = 256
        #expect(configuration.maxConnectionsPerAddress == 3 && configuration.connectionCapIsChosen)
        configuration.maxConnectionsPerAddress = nil
        #expect(configuration.maxConnectionsPerAddress == nil, "set to none, it stays none")
    }

    @Test func aTrustedProxysConnectionsAreNotCounted() async throws {
        try await TestServer.with(configure: { $0.maxConnectionsPerAddress = 1; $0.maxSocketsPerAddress = nil; $0.trustedProxies = ["127.0.0.1"] }) { server in
            var open: [RawConnection] = []
            for n in 0..<3 {
                let connection = try await RawConnection(port: server.port)
                #expect(await Self.isServed(connection), "connection \(n + 1) through the proxy")
                open.append(connection)
            }
            for connection in open { await connection.close() }
        }
    }

    /// Whether `connection` gets an answer to a health check (on a connection kept alive).
    static func isServed(_ connection: RawConnection) async -> Bool {
        let before = await connection.received(within: .zero) { _ in true }.count
        guard (try? await connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) != nil else { return false }
        let bytes = await connection.received { $0.count > before && String(decoding: $0[before...], as: UTF8.self).contains("\r\n\r\n") }
        return String(decoding: bytes[before...], as: UTF8.self).hasPrefix("HTTP/1.1 200")
    }

    @Test func socketCapsCountEachAddressApartAndForgetAnAddressWithItsLastSocket() {
        let caps = SocketCaps(limit: 2)
        #expect(caps.acquire("10.0.0.1") && caps.acquire("10.0.0.1"))
        #expect(!caps.acquire("10.0.0.1"))
        #expect(caps.acquire("10.0.0.2"))
        caps.release("10.0.0.1")
        #expect(caps.count("10.0.0.1") == 1 && caps.acquire("10.0.0.1"))
        for _ in 0..<2 { caps.release("10.0.0.1") }
        caps.release("10.0.0.2")
        caps.release("10.0.0.2")
        #expect(caps.addresses == 0)
    }

    @Test func behindATrustedProxyTheClientItForwardsIsTheAddressAndAnythingElseIsThePeer() {
        let addresses = ClientAddresses(trustedProxies: ["127.0.0.1", "10.0.0.9"])
        // A trusted proxy: the rightmost entry that is not a proxy of ours.
        #expect(addresses.resolve(peer: "127.0.0.1", forwardedFor: ["192.0.2.1"]) == "192.0.2.1")
        #expect(addresses.resolve(peer: "127.0.0.1", forwardedFor: ["203.0.113.7, 192.0.2.1"]) == "192.0.2.1", "the left part is the client's say")
        #expect(addresses.resolve(peer: "127.0.0.1", forwardedFor: ["192.0.2.1, 10.0.0.9"]) == "192.0.2.1", "a chain of our proxies")
        #expect(addresses.resolve(peer: "127.0.0.1", forwardedFor: ["203.0.113.7", "192.0.2.1"]) == "192.0.2.1", "two header lines are one list")
        #expect(addresses.resolve(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        for malformed in ["192.0.2.1, ", "192.0.2.1,", "unknown", "192.0.2.1:5000", "192.0.2.1, proxy.local"] {
            #expect(addresses.resolve(peer: "127.0.0.1", forwardedFor: [malformed]) == "127.0.0.1", "\(malformed): an entry that is no address names nobody")
        }
        // One spelling per address: a dual-stack socket's IPv4 peer, IPv6 written out.
        #expect(addresses.resolve(peer: "::ffff:127.0.0.1", forwardedFor: ["::FFFF:192.0.2.1"]) == "192.0.2.1")
        #expect(ClientAddresses(trustedProxies: ["0:0:0:0:0:0:0:1"]).resolve(peer: "::1", forwardedFor: ["2001:DB8::1"]) == "2001:db8::1")
        // Any other peer is the client, whatever it claims.
        #expect(addresses.resolve(peer: "192.0.2.50", forwardedFor: ["192.0.2.1"]) == "192.0.2.50")
        #expect(addresses.resolve(peer: nil, forwardedFor: ["192.0.2.1"]) == "unknown")
        #expect(ClientAddresses.isAddress("::1") && ClientAddresses.isAddress("127.0.0.1"))
        #expect(!ClientAddresses.isAddress("proxy.local") && !ClientAddresses.isAddress("127.0.0.1:80"))
    }

    @Test func limitsCountAnIPv6ClientByItsSlash64AndAnIPv4ClientByItsAddress() {
        #expect(ClientAddresses.limitKey("2001:db8::1") == "2001:db8:0:0::/64")
        #expect(ClientAddresses.limitKey("2001:db8::1") == ClientAddresses.limitKey("2001:db8:0:0:ffff:ffff:ffff:ffff"))
        #expect(ClientAddresses.limitKey("2001:db8::1") != ClientAddresses.limitKey("2001:db8:0:1::1"))
        #expect(ClientAddresses.limitKey("fe80:1:2:3:4:5:6:7") == "fe80:1:2:3::/64")
        #expect(ClientAddresses.limitKey("192.0.2.1") == "192.0.2.1")
        #expect(ClientAddresses.limitKey("unknown") == "unknown")
    }

    @Test func windowsThatAreOverLeaveTheTableAtTheNextSweep() async throws {
        let clock = ShiftedClock()
        let limiter = RateLimiter(clock: clock)
        for n in 0..<100 { try await limiter.check("join:192.0.2.\(n)", limit: (5, 60)) }
        try await limiter.check("guest:192.0.2.1", limit: (5, 3_600))
        #expect(await limiter.keyCount == 101)
        clock.advance(byMs: 61_000)
        try await limiter.check("join:192.0.2.200", limit: (5, 60))
        #expect(await limiter.keyCount == 2, "the minute's windows are over; the hour's is not, and the new one counts")
    }

    @Test func aWallClockSetBackStartsAUsedUpWindowAgainRatherThanRefusingForTheJump() async throws {
        let clock = ShiftedClock()
        let limiter = RateLimiter(clock: clock)
        for _ in 0..<2 { try await limiter.check("join:192.0.2.1", limit: (2, 60)) }
        await #expect(throws: RateLimitedError.self) { try await limiter.check("join:192.0.2.1", limit: (2, 60)) }
        clock.advance(byMs: -3_600_000)
        try await limiter.check("join:192.0.2.1", limit: (2, 60))
    }

    @Test func behindATrustedProxyEachForwardedClientHasItsOwnBudgetsAndAForgedHeaderElsewhereGetsNone() async throws {
        let limits = RateLimits(anonymous: (2, 60))
        try await TestServer.with(configure: { $0.rateLimits = limits; $0.trustedProxies = ["127.0.0.1"]; $0.maxSocketsPerAddress = 1 }) { server in
            for _ in 0..<2 { #expect(try await server.api.request("GET", "/api/v1/time", headers: ["X-Forwarded-For": "192.0.2.1"]).status == 200) }
            #expect(try await server.api.request("GET", "/api/v1/time", headers: ["X-Forwarded-For": "192.0.2.1"]).status == 429)
            #expect(try await server.api.request("GET", "/api/v1/time", headers: ["X-Forwarded-For": "192.0.2.2"]).status == 200, "another client")
            // IPv6 clients count by their /64: another address of the same host shares its budget.
            for address in ["2001:db8::1", "2001:db8::2:1"] {
                #expect(try await server.api.request("GET", "/api/v1/time", headers: ["X-Forwarded-For": address]).status == 200)
            }
            #expect(try await server.api.request("GET", "/api/v1/time", headers: ["X-Forwarded-For": "2001:db8::ffff"]).status == 429, "the same /64")
            #expect(try await server.api.request("GET", "/api/v1/time", headers: ["X-Forwarded-For": "2001:db8:0:1::1"]).status == 200, "another /64")

            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let first = TestSocket(server: server, session: id, token: host.token, forwardedFor: "192.0.2.3")
            try await first.next(.stateSync)
            let second = TestSocket(server: server, session: id, token: host.token, forwardedFor: "192.0.2.3")
            #expect(try #require(try await second.next(.error).error).code == .rateLimited, "the client's one socket is open")
            let elsewhere = TestSocket(server: server, session: id, token: host.token, forwardedFor: "192.0.2.4")
            try await elsewhere.next(.stateSync)
            for socket in [first, second, elsewhere] { await socket.close() }
        }
        // Not trusted: the header is the client's say and changes nothing.
        try await TestServer.with(configure: { $0.rateLimits = limits }) { server in
            var statuses: [Int] = []
            for n in 0..<3 { statuses.append(try await server.api.request("GET", "/api/v1/time", headers: ["X-Forwarded-For": "192.0.2.\(n)"]).status) }
            #expect(statuses == [200, 200, 429])
        }
    }

    @Test func aSignInOrJoinRefusedForWhatItSentSpendsNoneOfTheAddresssLimit() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(guestAuth: (2, 60), join: (2, 60)) }) { server in
            var statuses: [Int] = []
            for _ in 0..<4 { statuses.append(try await server.api.send("POST", "/auth/guest", json: GuestAuthRequest(displayName: " ")).status) }
            let member = try await server.api.guest("Hal")
            _ = try await server.api.guest("Ida")
            statuses.append(try await server.api.send("POST", "/auth/guest", json: GuestAuthRequest(displayName: "Jo")).status)
            #expect(statuses == [400, 400, 400, 400, 429])

            var joins: [Int] = []
            for code in ["", "   ", String(repeating: "A", count: 200)] {
                joins.append(try await server.api.send("POST", "/api/v1/sessions/join", token: member.token, json: JoinSessionRequest(code: code)).status)
            }
            // A well-formed code nobody holds counts: that is the guessing the limit is for.
            for _ in 0..<3 {
                joins.append(try await server.api.send("POST", "/api/v1/sessions/join", token: member.token, json: JoinSessionRequest(code: "ZZZ999")).status)
            }
            #expect(joins == [400, 400, 400, 404, 404, 429])
        }
    }

    @Test func coversAndSongsHaveABudgetOfTheirOwnSoAPartysMediaLeavesItsSignInsAlone() async throws {
        let (id, _) = try AudioStreamingTests.demoTrack()
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(anonymous: (3, 60), media: (8, 60)) }) { server in
            _ = try await server.api.guest("Gus")  // 1 of 3
            // Four phones behind one router fetch the song and its cover: more than the
            // anonymous budget, well inside the media one (a doubled slash counts the same).
            var media: [Int] = []
            for path in ["/api/v1/tracks/\(id)/audio", "/api/v1/tracks/\(id)/artwork", "//api/v1/tracks/\(id)/audio", "/api/v1/tracks/\(id)/artwork"] {
                media.append(try await server.api.request("GET", path).status)
                media.append(try await server.api.request("HEAD", path).status)
            }
            #expect(media.allSatisfy { $0 == 200 || $0 == 404 }, "\(media)")
            #expect(media.contains(200))

            // The party's sign-ins kept their budget ...
            _ = try await server.api.guest("Ida")  // 2 of 3
            #expect(try await server.api.request("GET", "/api/v1/time").status == 200)  // 3 of 3
            #expect(try await server.api.request("GET", "/api/v1/time").status == 429)
            // ... and media past its own budget is refused with a wait, anonymous requests aside.
            let past = try await server.api.request("GET", "/api/v1/tracks/\(id)/audio")
            #expect(past.status == 429)
            #expect(Int(past.headers["retry-after"] ?? "") ?? 0 >= 1)
        }
    }

    @Test func onlyTheMethodsAMediaRouteAnswersCountAsMedia() {
        func reached(_ method: HTTPRequest.Method, _ path: String) -> MediaRoute? {
            MediaRoute.reached(by: method, path.split(separator: "/"))
        }
        #expect(reached(.get, "/api/v1/tracks/abc/audio") == .audio)
        #expect(reached(.head, "/api/v1/tracks/abc/audio") == .audio)
        #expect(reached(.get, "//api/v1/tracks/abc/artwork/") == .artwork, "as the router reads it")
        #expect(reached(.head, "/api/v1/tracks/abc/artwork") == .artwork, "the router answers HEAD with GET's headers")
        #expect(reached(.put, "/api/v1/tracks/abc/artwork") == nil)
        #expect(reached(.post, "/api/v1/tracks/abc/audio") == nil)
        #expect(reached(.get, "/api/v1/tracks/abc") == nil)
        #expect(reached(.get, "/api/v1/tracks/abc/audio/more") == nil)
        #expect(reached(.get, "/api/v2/tracks/abc/audio") == nil)
    }

    @Test func anAddressPastItsAnonymousRequestCapGets429WhileMembersAndThePageAreServed() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(anonymous: (5, 60)) }) { server in
            let member = try await server.api.guest("Gus")  // 1 of 5: signing in has no token yet
            for _ in 0..<4 {
                let time = try await server.api.request("GET", "/api/v1/time")
                #expect(time.status == 200, "\(time.text)")
            }
            let limited = try await server.api.request("GET", "/api/v1/time")
            #expect(limited.status == 429)
            #expect(limited.errorCode == .rateLimited)
            #expect(Int(limited.headers["retry-after"] ?? "") ?? 0 >= 1)
            let forged = try await server.api.request("GET", "/api/v1/time", token: member.token + "x")
            #expect(forged.status == 429, "a token that does not verify is no token")
            let doubled = try await server.api.request("GET", "//api/v1/time")
            #expect(doubled.status == 429, "a doubled slash reaches the same route and counts the same")

            let signedIn = try await server.api.request("GET", "/api/v1/search?q=tone", token: member.token)
            #expect(signedIn.status == 200)
            let page = try await server.api.request("GET", "/")
            #expect(page.status == 200, "the web client's files do not count")
        }
    }
}
