import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// Per-address caps: open sockets, and API requests without a valid token.
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

            let signedIn = try await server.api.request("GET", "/api/v1/search?q=tone", token: member.token)
            #expect(signedIn.status == 200)
            let page = try await server.api.request("GET", "/")
            #expect(page.status == 200, "the web client's files do not count")
        }
    }
}
