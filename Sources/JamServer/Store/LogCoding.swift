import Foundation
import JamCore
import JamProtocol
import NIOCore

/// The stored form of a record's inputs and of a snapshot's state and answers (JSON: the
/// same `Codable` definitions the domain uses, readable with any SQLite client).
enum LogCoding {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func encode(_ inputs: [TimedInput]) -> [UInt8] {
        encodeOrCrash(inputs)
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

    static func decodeAnswers(_ bytes: [UInt8]) throws -> [StoredAnswer] {
        bytes.isEmpty ? [] : try JSONDecoder().decode([StoredAnswer].self, from: Data(bytes))
    }

    /// Frames one per line, each as `<seq> <json>`: JSON text never holds a raw newline.
    static func joinFrames(_ frames: [(seq: Int64, bytes: ByteBuffer)]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frames.reduce(0) { $0 + $1.bytes.readableBytes + 12 })
        for frame in frames {
            bytes += String(frame.seq).utf8
            bytes.append(UInt8(ascii: " "))
            bytes += frame.bytes.readableBytesView
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// The frames `joinFrames` wrote; a line that does not read is skipped.
    static func splitFrames(_ bytes: [UInt8]) -> [(seq: Int64, bytes: ByteBuffer)] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).compactMap { line in
            guard let space = line.firstIndex(of: UInt8(ascii: " ")),
                  let seq = Int64(String(decoding: line[line.startIndex..<space], as: UTF8.self)) else { return nil }
            return (seq, ByteBuffer(bytes: line[(space + 1)...]))
        }
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
