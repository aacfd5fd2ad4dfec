import Foundation
import JamCore
import JamProtocol

/// The stored form of a record's inputs and of a snapshot's state and answers (JSON: the
/// same `Codable` definitions the domain uses, readable with any SQLite client).
enum LogCoding {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func encode(_ inputs: [TimedInput]) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.array(inputs)
        return writer.bytes
    }

    static func decodeInputs(_ bytes: [UInt8]) throws -> [TimedInput] {
        try JSONDecoder().decode([TimedInput].self, from: Data(bytes))
    }

    static func encode(_ state: SessionState) -> [UInt8] {
        encodeOrCrash(state)
    }

    static func decodeState(_ bytes: [UInt8]) throws -> SessionState {
        try JSONDecoder().decode(SessionState.self, from: Data(bytes))
    }

    static func encode(_ answers: [StoredAnswer]) -> [UInt8] {
        encodeOrCrash(answers)
    }

    /// The answers a snapshot holds; unreadable ones are damage (`DamagedStoredSession`).
    static func decodeAnswers(_ bytes: [UInt8], session: SessionID, snapshotAt lsn: Int64) throws(DamagedStoredSession) -> [StoredAnswer] {
        guard !bytes.isEmpty else { return [] }
        let answers: [StoredAnswer]
        do {
            answers = try JSONDecoder().decode([StoredAnswer].self, from: Data(bytes))
        } catch {
            throw DamagedStoredSession(session: session, part: .snapshot(lsn), problem: "has answers that cannot be read (\(error))")
        }
        // Read as no fingerprint, such an answer would answer any command sent under its id.
        if let bad = answers.first(where: { $0.command.map { !RequestFingerprint.isText($0) } ?? false }) {
            throw DamagedStoredSession(
                session: session, part: .snapshot(lsn),
                problem: "has answers that cannot be read (the command fingerprint of \(bad.key) is \(String(reflecting: bad.command ?? "")))")
        }
        return answers
    }

    private static func encodeOrCrash<T: Encodable>(_ value: T) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            // Every stored type is plain Codable data: failing to encode is a programming error.
            preconditionFailure("failed to encode \(T.self) for the store: \(error)")
        }
    }
}
