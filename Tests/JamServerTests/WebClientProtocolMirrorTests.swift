import Foundation
import JamCore
import JamProtocol
import Testing

/// The browser client mirrors JamProtocol in one module, `js/protocol.js`; this keeps the two from drifting apart.
@Suite struct WebClientProtocolMirrorTests {
    /// A file of the web client by its path below `Web/`.
    static func webFile(_ path: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/JamWebClient/Web/\(path)")
    }

    static func protocolModule() throws -> String {
        try String(contentsOf: webFile("js/protocol.js"), encoding: .utf8)
    }

    /// The `key: value` pairs of `export const <name> = Object.freeze({ … })`.
    static func frozenObject(_ name: String, in source: String) throws -> [String: String] {
        guard let start = source.range(of: "export const \(name) = Object.freeze({") else {
            throw JSONMirrorError("protocol.js has no frozen object \(name)")
        }
        guard let end = source[start.upperBound...].range(of: "})") else { throw JSONMirrorError("\(name) is not closed") }
        var pairs: [String: String] = [:]
        for entry in source[start.upperBound..<end.lowerBound].split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            guard parts.count == 2 else { continue }
            pairs[parts[0]] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
        }
        return pairs
    }

    /// The `Event.name` members of `export const NAME = new Set([...])` in `source`.
    static func eventSet(_ name: String, in source: String) throws -> Set<String> {
        guard let start = source.range(of: "export const \(name) = new Set([") else {
            throw JSONMirrorError("protocol.js has no set \(name)")
        }
        guard let end = source[start.upperBound...].range(of: "])") else { throw JSONMirrorError("\(name) is not closed") }
        var members = Set<String>()
        for entry in source[start.upperBound..<end.lowerBound].split(separator: ",") {
            let member = entry.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !member.isEmpty else { continue }
            guard member.hasPrefix("Event.") else { throw JSONMirrorError("\(name) holds \(member), not an Event member") }
            members.insert(String(member.dropFirst("Event.".count)))
        }
        return members
    }

    struct JSONMirrorError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func eventCommandErrorAndEnumNamesAreTheSameAsInJamProtocol() throws {
        let source = try Self.protocolModule()
        let events = try Self.frozenObject("Event", in: source)
        #expect(Set(events.values) == Set(ServerEventType.allCases.map(\.rawValue)))
        let commands = try Self.frozenObject("Command", in: source)
        #expect(Set(commands.values) == Set(ClientCommandType.allCases.map(\.rawValue)))
        let codes = try Self.frozenObject("ErrorCode", in: source)
        #expect(Set(codes.values) == Set(ErrorCode.allCases.map(\.rawValue)))
        #expect(source.contains("export const HISTORY_LIMIT = \(SessionView.historyLimit);"))
        let auth = try Self.frozenObject("SocketAuth", in: source)
        #expect(auth == ["protocolName": SocketAuth.protocolName, "tokenPrefix": SocketAuth.tokenPrefix])
        let statuses = try Self.frozenObject("ERROR_STATUS", in: source)
        for code in ErrorCode.allCases {
            #expect(statuses[code.rawValue] == String(code.httpStatus), "\(code)")
        }
        #expect(Set(try Self.frozenObject("TrackSource", in: source).values) == Set(TrackSource.allCases.map(\.rawValue)))
        #expect(Set(try Self.frozenObject("Role", in: source).values) == Set(Role.allCases.map(\.rawValue)))
        #expect(Set(try Self.frozenObject("HistoryOutcome", in: source).values) == Set(HistoryOutcome.allCases.map(\.rawValue)))
        #expect(Set(try Self.frozenObject("ListenerProblem", in: source).values) == Set(ListenerProblem.allCases.map(\.rawValue)))
    }

    @Test func theLimitsThePageChecksAreTheServersLimits() throws {
        let source = try Self.protocolModule()
        #expect(try Self.frozenObject("Limits", in: source) == [
            "maxDisplayName": String(Validate.maxDisplayName), "maxSessionName": String(Validate.maxSessionName),
            "maxNonce": String(Validate.maxNonce), "maxCommandId": String(ClientFrame.maxIdLength),
            "maxCodeLength": String(JoinCodes.maxLength), "maxId": String(JamID.maxLength),
            "maxBytesPerCharacter": String(Validate.maxBytesPerCharacter),
        ])
        #expect(try Self.frozenObject("CalibrationTiming", in: source) == [
            "minimumProbeLeadMs": String(Int(CalibrationRules.minimumProbeLeadMs)),
        ])
        #expect(try Self.frozenObject("DeviceLimits", in: source) == [
            "maxDeviceId": String(Validate.maxDeviceId), "maxDelayMs": String(Int(Validate.maxDeviceDelayMs)),
        ])
        #expect(try Self.frozenObject("SettingsLimits", in: source) == [
            "memberLimit": String(SessionSettings.memberLimit), "queueLimit": String(SessionSettings.queueLimit),
            "cooldownLimit": String(SessionSettings.cooldownLimit),
        ])
        // The longest add cooldown the settings offer is the longest the server takes (the
        // steps themselves are held to JamClient's by Tests/Fixtures/ClientParity/settings.json).
        let choices = try String(contentsOf: Self.webFile("js/settings-choices.js"), encoding: .utf8)
        #expect(choices.contains("{ value: SettingsLimits.cooldownLimit, words: 'one an hour' },\n]);"))
    }

    @Test func theEventsThatKeepTheSeqAreTheSameAsInJamProtocol() throws {
        let direct = try Self.eventSet("DIRECT_EVENTS", in: Self.protocolModule())
        // stateSync keeps the seq too, but both clients take it on a path of its own: it sets the seq.
        #expect(direct == Set(ServerEventType.allCases.filter { !$0.advancesSeq && $0 != .stateSync }.map(\.rawValue)))
    }

    @Test func theSyncColumnCallsAReportStaleAtTheSameAgeAsSyncGrade() throws {
        let timing = try Self.frozenObject("SyncTiming", in: Self.protocolModule())
        #expect(timing["staleMs"].flatMap { Double($0) } == SyncGrade.staleMs)
    }
}
