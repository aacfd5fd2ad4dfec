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

    /// A duration option, else its environment variable; both must be positive.
    func milliseconds(_ option: Int64?, _ variable: String, _ name: String) throws -> Int64? {
        if let option {
            guard option > 0 else { throw ValidationError("\(name) must be a positive number of milliseconds, got \(option)") }
            return option
        }
        guard let text = ProcessInfo.processInfo.environment[variable] else { return nil }
        guard let value = Int64(text), value > 0 else { throw ValidationError("\(variable) must be a positive number of milliseconds, got \"\(text)\"") }
        return value
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
