import Foundation
import JamProtocol
import Testing

@testable import JamQueueIT

/// Optional fields are written as `null`, as its backend's models write them, never left out.
@Suite("QueueIT: fields without a value")
struct NullFieldTests {
    static func object(_ value: some Encodable) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(QueueIT.encode(value))) as? [String: Any])
    }

    @Test("a user without a name has username null")
    func aUserWithoutANameHasUsernameNull() throws {
        let user = try Self.object(QueueITViews.user("00000000-0000-0000-0000-0000000000a1", name: nil))
        #expect(user["username"] is NSNull, "\(user)")
        #expect(user["id"] as? String == "00000000-0000-0000-0000-0000000000a1")
        #expect(user["music_provider"] as? String == "none")
        #expect(user["storefront"] as? String == "us")
        #expect(user["is_anonymous"] as? Bool == false)
    }
}
