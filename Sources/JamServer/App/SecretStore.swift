import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The token secret: from configuration, else read from (or first written to) the data folder.
enum SecretStore {
    /// Shortest secret accepted from the file (a generated one has 64 hex digits).
    static let minimumLength = 32

    /// Why the secret file cannot be used; the server does not start.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads `directory/secret`, or creates it readable by this user only (0600, from the
    /// first byte: the file never exists with wider permissions). An existing file is never
    /// replaced: every token signed with it would stop working.
    ///
    /// The secret is written whole to a draft of this process's own, then linked in under its
    /// name: another process starting at the same moment finds either no secret or the whole
    /// one, never an empty file. A crash before the link leaves at most a draft (`.secret-*`),
    /// never an empty secret that would stop every later start. A file system without hard
    /// links gets the secret written in place, as before.
    static func loadOrCreate(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("secret")
        if FileManager.default.fileExists(atPath: file.path) { return try read(file) }
        let secret = generate()
        let draft = directory.appendingPathComponent(".secret-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        guard try create(draft, holding: secret, naming: file) else {
            throw Failure(description: "cannot create the secret file \(file.path): a draft \(draft.lastPathComponent) is there already")
        }
        defer { unlink(draft.path) }
        guard link(draft.path, file.path) == 0 else {
            switch errno {
            case EEXIST:
                // Another process put its secret in place first: use theirs.
                return try read(file)
            case EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS:
                // No hard links here: written in place, as another process may be doing too.
                return try create(file, holding: secret, naming: file) ? secret : read(file)
            default:
                throw Failure(description: "cannot create the secret file \(file.path): \(String(cString: strerror(errno)))")
            }
        }
        return secret
    }

    /// Creates `path` (0600) holding `secret`, written and synced; false when it exists already.
    /// `file` names the secret in errors.
    private static func create(_ path: URL, holding secret: String, naming file: URL) throws -> Bool {
        let descriptor = open(path.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return false }
            throw Failure(description: "cannot create the secret file \(file.path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(secret.utf8))
        try handle.synchronize()
        try handle.close()
        return true
    }

    /// A new secret: 256 random bits as 64 hex digits.
    static func generate() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { bytes in bytes.map { String(format: "%02x", $0) }.joined() }
    }

    private static func read(_ file: URL) throws -> String {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw Failure(description: "cannot read the secret file \(file.path): \(error.localizedDescription)")
        }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard secret.count >= minimumLength else {
            throw Failure(description:
                "the secret file \(file.path) holds \(secret.count) characters, fewer than \(minimumLength); "
                    + "put a longer secret in it, or remove it to have a new one made (signed-in tokens then stop working)")
        }
        // Tighten a file someone made readable by others; the secret signs every token.
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        if let mode = attributes[.posixPermissions] as? NSNumber, mode.intValue & 0o077 != 0 {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        }
        return secret
    }
}
