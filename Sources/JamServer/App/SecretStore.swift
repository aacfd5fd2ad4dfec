import Crypto
import Foundation

/// The token secret: from configuration, else read from (or first written to) the data folder.
enum SecretStore {
    static func loadOrCreate(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("secret")
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            let trimmed = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.count >= 32 { return trimmed }
        }
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let secret = bytes.map { String(format: "%02x", $0) }.joined()
        try Data(secret.utf8).write(to: file, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return secret
    }
}
