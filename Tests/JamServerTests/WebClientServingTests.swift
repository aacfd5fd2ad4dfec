import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// The browser client's files, join links and invite QR codes.
@Suite struct WebClientServingTests {
    @Test func thePageIsServedAtTheRootAndForEveryJoinLink() async throws {
        try await TestServer.with { server in
            let root = try await server.api.request("GET", "/")
            #expect(root.status == 200)
            #expect(root.headers["content-type"]?.hasPrefix("text/html") == true)
            #expect(root.headers["content-security-policy"]?.contains("default-src 'self'") == true)
            #expect(root.text.contains("<html"))
            let link = try await server.api.request("GET", "/j/4KX9QZ")
            #expect(link.status == 200)
            #expect(link.body == root.body)
            #expect(link.headers["content-security-policy"] == root.headers["content-security-policy"])
            let preview = try await server.api.request("HEAD", "/j/4KX9QZ")
            #expect(preview.status == 200)
            #expect(preview.headers["content-type"]?.hasPrefix("text/html") == true)
        }
    }

    @Test func unknownFilesAre404AndPathsOutsideTheClientAreRefused() async throws {
        try await TestServer.with { server in
            let missing = try await server.api.request("GET", "/no-such-file.js")
            #expect(missing.status == 404)
            let outside = try await server.api.request("GET", "/js/%2e%2e/%2e%2e/Package.swift")
            #expect(outside.status == 400)
        }
    }

    @Test func anInviteLinkBecomesAQRCodeImage() async throws {
        try await TestServer.with { server in
            let text = "http://127.0.0.1:8080/j/4KX9QZ".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let svg = try await server.api.request("GET", "/api/v1/qr.svg?text=\(text)")
            #expect(svg.status == 200)
            #expect(svg.headers["content-type"] == "image/svg+xml")
            #expect(svg.text.hasPrefix("<svg"))
            let missing = try await server.api.request("GET", "/api/v1/qr.svg")
            #expect(missing.status == 400)
            #expect(missing.errorCode == .invalidField)
            let long = try await server.api.request("GET", "/api/v1/qr.svg?text=\(String(repeating: "a", count: 513))")
            #expect(long.status == 400)
            #expect(long.text.contains("512"))
        }
    }
}
