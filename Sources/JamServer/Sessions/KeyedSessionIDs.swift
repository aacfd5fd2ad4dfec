import Crypto
import Foundation
import JamProtocol

/// The id a session gets when its creator names the create with an idempotency key: the same
/// user and key always give the same id, on every node sharing the server secret, so a create
/// sent again finds the session the first one made, even after a restart. Keyed with the
/// secret, so nobody can work out another user's session id from their key.
package struct KeyedSessionIDs: Sendable {
    /// The HMAC key's bytes (`SymmetricKey` is not `Sendable`).
    private let keyBytes: [UInt8]

    /// Ids keyed with the server secret.
    package init(secret: String) {
        keyBytes = Array(SHA256.hash(data: Data("openjam session ids for idempotency keys\u{0}\(secret)".utf8)))
    }

    /// The session id `user`'s create under `idempotencyKey` gets: a UUID of version 8 (RFC
    /// 9562's custom kind), from the first 16 bytes of an HMAC of both.
    package func id(for user: UserID, key idempotencyKey: IdempotencyKey) -> SessionID {
        let code = Array(HMAC<SHA256>.authenticationCode(for: Data("\(user.rawValue)\u{0}\(idempotencyKey.value)".utf8), using: SymmetricKey(data: keyBytes)))
        let word = { (start: Int) in code[start..<start + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        // Version 8 in the top nibble of byte 6, variant 0b10 in the top bits of byte 8.
        return JamID.uuid(high: word(0) & ~0xF000 | 0x8000, low: word(8) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000)
    }
}
