import ArgumentParser
import Foundation
import JamServer

/// The checks `jam serve` makes of its options and environment: each bad value stops it
/// with a message naming where the value came from.
extension Serve {
    /// A whole-number option, else its environment variable; 0 (never) up to a year's worth
    /// (`limit`: 8760 hours, 525600 minutes). An error names the one that was used.
    func count(_ option: Int?, _ variable: String, _ name: String, upTo limit: Int = 8_760) throws -> Int? {
        let value: Int
        let source: String
        if let option {
            (value, source) = (option, name)
        } else if let text = ProcessInfo.processInfo.environment[variable] {
            guard let parsed = Int(text) else { throw ValidationError("\(variable) must be a whole number, got \"\(text)\"") }
            (value, source) = (parsed, variable)
        } else {
            return nil
        }
        guard (0...limit).contains(value) else { throw ValidationError("\(source) must be 0 (never) to \(limit), got \(value)") }
        return value
    }

    /// A duration option, else its environment variable; both must be positive, and at most a
    /// year: a session keeps the figure in its stored rules, where a larger one would overflow
    /// the instant it is added to.
    func milliseconds(_ option: Int64?, _ variable: String, _ name: String) throws -> Int64? {
        let most = Self.yearMs
        if let option {
            guard (1...most).contains(option) else { throw ValidationError("\(name) must be 1 to \(most) milliseconds (a year), got \(option)") }
            return option
        }
        guard let text = ProcessInfo.processInfo.environment[variable] else { return nil }
        guard let value = Int64(text), (1...most).contains(value) else {
            throw ValidationError("\(variable) must be 1 to \(most) milliseconds (a year), got \"\(text)\"")
        }
        return value
    }

    static let yearMs: Int64 = 365 * 24 * 3_600_000

    /// Shortest PirateRadio ping interval: a ping must be able to go out (a socket's first
    /// frames wait 100 ms) and its answer come back within one, or healthy sockets close.
    static let shortestPingMs: Int64 = 250

    /// The PirateRadio ping interval, from `--ping-interval-ms` or `JAM_PR_PING_INTERVAL_MS`.
    func pingInterval() throws -> Int64? {
        guard let value = try milliseconds(pingIntervalMs, "JAM_PR_PING_INTERVAL_MS", "--ping-interval-ms") else { return nil }
        guard value >= Self.shortestPingMs else {
            let source = pingIntervalMs != nil ? "--ping-interval-ms" : "JAM_PR_PING_INTERVAL_MS"
            throw ValidationError("\(source) must be at least \(Self.shortestPingMs) milliseconds (a ping and its answer must fit in one), got \(value)")
        }
        return value
    }

    /// How often to rescan the music folders, in seconds (0 never, at most a year), from
    /// `--rescan-seconds` or `JAM_RESCAN_SECONDS`. Only music folders are rescanned, so the
    /// option without them, which would be ignored without a word, is refused; the variable
    /// may be set for the machine (as `JAM_MUSIC` may be set for another profile) and is only
    /// checked for its form.
    func rescanInterval(environment: [String: String], hasFolders: Bool) throws -> Int? {
        let given: (source: String, text: String)? =
            if let rescanSeconds { ("--rescan-seconds", String(rescanSeconds)) }
            else if let text = environment["JAM_RESCAN_SECONDS"] { ("JAM_RESCAN_SECONDS", text) }
            else { nil }
        guard let given else { return nil }
        let most = Int(Self.yearMs / 1000)
        guard let value = Int(given.text), (0...most).contains(value) else {
            throw ValidationError("\(given.source) must be 0 (never) to \(most) seconds, got \"\(given.text)\"")
        }
        guard hasFolders || rescanSeconds == nil || value == 0 else {
            throw ValidationError("\(given.source) has no effect without music folders (--music, JAM_MUSIC): only they are rescanned")
        }
        return value
    }

    /// The data folder from `--data-dir` or `JAM_DATA_DIR`, checked: empty, a file, or a
    /// folder this user cannot write would otherwise fail later with a bare system error.
    func dataFolder(environment: [String: String]) throws -> URL? {
        let given: (source: String, path: String)? =
            if let dataDir { ("--data-dir", dataDir) }
            else if let path = environment["JAM_DATA_DIR"] { ("JAM_DATA_DIR", path) }
            else { nil }
        guard let given else { return nil }
        guard !given.path.isEmpty else { throw ValidationError("the data folder (\(given.source)) is empty") }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: given.path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw ValidationError("data folder \"\(given.path)\" (\(given.source)) is a file, not a folder") }
            guard FileManager.default.isWritableFile(atPath: given.path) else {
                throw ValidationError("data folder \"\(given.path)\" (\(given.source)) cannot be written by this user")
            }
        }
        return URL(fileURLWithPath: given.path)
    }

    /// The token secret given, if any: `--secret`, else (PirateRadio) JWT_SECRET, else
    /// JAM_SECRET. Anybody who knows it can sign in as anybody, so an empty or short one
    /// (an unset shell variable, a placeholder) stops the server instead of being used.
    func chosenSecret(environment: [String: String], pirate: Bool) throws -> String? {
        let given: (source: String, value: String)? =
            if let secret { ("--secret", secret) }
            else if pirate, let value = environment["JWT_SECRET"] { ("JWT_SECRET", value) }
            else if let value = environment["JAM_SECRET"] { ("JAM_SECRET", value) }
            else { nil }
        guard let given else { return nil }
        let minimum = ServerConfiguration.minimumSecretLength
        guard given.value.count >= minimum else {
            throw ValidationError(
                "\(given.source) holds \(given.value.count) characters; a token secret needs at least \(minimum) "
                    + "(e.g. $(openssl rand -hex 32)), or leave it unset to have one made and kept in the data folder")
        }
        return given.value
    }

    /// Options only some profiles read: given to another, they would be ignored without a
    /// word, so they stop the server instead.
    func refuseOptionsOtherProfilesRead(_ profile: ProfileName) throws {
        let given: [(option: String, isGiven: Bool, readBy: [ProfileName], why: String)] = [
            ("--idle-timeout-ms", idleTimeoutMs != nil, [.pirateRadio], "a PirateRadio setting"),
            ("--grace-period-ms", gracePeriodMs != nil, [.pirateRadio], "a PirateRadio setting"),
            ("--code-lifetime-ms", codeLifetimeMs != nil, [.pirateRadio], "a PirateRadio setting"),
            ("--sweep-interval-ms", sweepIntervalMs != nil, [.pirateRadio], "a PirateRadio setting"),
            ("--ping-interval-ms", pingIntervalMs != nil, [.pirateRadio], "a PirateRadio setting"),
            ("--music", !music.isEmpty, [.openjam, .queueit], "PirateRadio plays no library"),
            ("--rescan-seconds", rescanSeconds != nil, [.openjam, .queueit], "PirateRadio plays no library"),
            ("--web-root", webRoot != nil, [.openjam], "only OpenJam's own profile serves the web client"),
            ("--token-hours", tokenHours != nil, [.openjam, .queueit], "PirateRadio's tokens last 24 hours, as its server's do"),
        ]
        for entry in given where entry.isGiven && !entry.readBy.contains(profile) {
            throw ValidationError("\(entry.option) has no effect with the \(profile.rawValue) profile: \(entry.why)")
        }
    }
}
