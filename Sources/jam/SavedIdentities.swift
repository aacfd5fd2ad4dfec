import Foundation
import JamClient
import JamProtocol

/// The sign-ins `jam host` and `jam join` keep, one per server and name, so a person who quits (or whose
/// terminal closes) comes back with `jam join CODE` as the same member, the host role included,
/// rather than as a stranger beside their own absent self. Kept in
/// `$XDG_STATE_HOME/openjam/identities.json` (`~/.local/state/openjam/…`), readable by its owner
/// only: a token is a credential.
struct SavedIdentities {
    /// One member's sign-in on one server.
    struct Entry: Codable, Equatable {
        var userId: UserID
        var displayName: String
        var token: String
        /// `JamAPI.tokenRefreshAt`: when the token is due for a fresh one.
        var tokenRefreshAt: Millis?
    }

    let file: URL

    /// The file under `XDG_STATE_HOME`, else `HOME/.local/state`; nil without either.
    static func standard(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> SavedIdentities? {
        let base: URL
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = URL(fileURLWithPath: state)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            base = URL(fileURLWithPath: home).appendingPathComponent(".local/state")
        } else {
            return nil
        }
        return SavedIdentities(file: base.appendingPathComponent("openjam/identities.json"))
    }

    /// The key of `server`: its address without a trailing slash. Files written before names
    /// had keys of their own hold one sign-in per server under it.
    static func key(_ server: URL) -> String {
        var text = server.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// The key of the member called `name` on `server`: the address, a space (which no address
    /// holds), the name. Joining as someone else leaves the other sign-in where it was.
    static func key(_ server: URL, name: String) -> String {
        key(server) + " " + name
    }

    /// The sign-in kept for `name` on `server`, from a file of either kind.
    func entry(for server: URL, name: String) throws -> Entry? {
        let entries = try load()
        if let entry = entries[Self.key(server, name: name)] { return entry }
        return entries[Self.key(server)].flatMap { $0.displayName == name ? $0 : nil }
    }

    /// Every saved sign-in; none when the file does not exist yet.
    func load() throws -> [String: Entry] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [:] }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw SavedIdentitiesError(file: file, problem: "cannot be read (\(error.localizedDescription)); delete it to sign in anew")
        }
        do {
            return try JSONDecoder().decode([String: Entry].self, from: data)
        } catch {
            // The decoder's own account (coding paths, underlying errors) says nothing to a person.
            throw SavedIdentitiesError(file: file, problem: "is not a sign-in file OpenJam can read (not the JSON it writes); delete it to sign in anew")
        }
    }

    /// Keeps `entry` for its name on `server`, replacing the file whole, readable by its owner only. Two
    /// `jam` processes saving at once take turns (an advisory lock beside the file), so
    /// neither loses the other's entry.
    func save(_ entry: Entry, for server: URL) throws {
        let folder = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SavedIdentitiesError(file: file, problem: "cannot be written (\(error))")
        }
        try whileLocked { try replace(with: entry, for: server, in: folder) }
    }

    /// Runs `body` holding the lock on `identities.lock` beside the file.
    private func whileLocked<T>(_ body: () throws -> T) throws -> T {
        let lock = file.deletingLastPathComponent().appendingPathComponent("identities.lock")
        let descriptor = open(lock.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SavedIdentitiesError(file: file, problem: "cannot be locked: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SavedIdentitiesError(file: file, problem: "cannot be locked: \(String(cString: strerror(errno)))") }
        }
        return try body()
    }

    /// Reads the entries, sets `entry`, and writes them all back.
    private func replace(with entry: Entry, for server: URL, in folder: URL) throws {
        var entries = try load()
        entries[Self.key(server, name: entry.displayName)] = entry
        // The same member's entry from before names had keys: this one takes its place.
        if entries[Self.key(server)]?.displayName == entry.displayName { entries[Self.key(server)] = nil }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(entries)
            // Written beside it and moved over it, so a crash never leaves half a file.
            let fresh = folder.appendingPathComponent(".identities.\(getpid()).json")
            guard FileManager.default.createFile(atPath: fresh.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
            guard rename(fresh.path, file.path) == 0 else {
                let problem = String(cString: strerror(errno))
                try? FileManager.default.removeItem(at: fresh)
                throw SavedIdentitiesError(file: file, problem: "cannot be replaced: \(problem)")
            }
        } catch let error as SavedIdentitiesError {
            throw error
        } catch {
            throw SavedIdentitiesError(file: file, problem: "cannot be written (\(error))")
        }
    }
}

/// The saved sign-ins' file cannot be read or written.
struct SavedIdentitiesError: Error, CustomStringConvertible {
    let file: URL
    let problem: String
    var description: String { "\(file.path) \(problem)" }
}
