import Foundation
import JamCore
import JamMedia
import JamPirateRadioWire
import JamProtocol

/// The fuzz targets: every parser that reads what strangers send (the client frames of each
/// wire profile, the REST bodies, the `Range` header, IDs and join codes, and each audio
/// format's tag reader). Besides not crashing, each target checks what its parser promises
/// (a decoded frame encodes back to itself, a range lies inside the file).
enum FuzzTarget: String, CaseIterable {
    case openJamFrame = "openjam-frame"
    case pirateRadioFrame = "pirate-radio-frame"
    case restBody = "rest-body"
    case byteRange = "byte-range"
    case idsAndCodes = "ids-and-codes"
    case mediaWAV = "media-wav"
    case mediaFLAC = "media-flac"
    case mediaMP3 = "media-mp3"
    case mediaOgg = "media-ogg"
    case mediaMP4 = "media-mp4"
    case mediaAAC = "media-aac"

    /// Runs the target on one input; a broken promise stops the process (libFuzzer keeps the input).
    func run(_ bytes: [UInt8]) {
        switch self {
        case .openJamFrame: Self.openJamFrame(Data(bytes))
        case .pirateRadioFrame: Self.pirateRadioFrame(Data(bytes))
        case .restBody: Self.restBody(bytes)
        case .byteRange: Self.byteRange(bytes)
        case .idsAndCodes: Self.idsAndCodes(String(decoding: bytes, as: UTF8.self))
        case .mediaWAV: Self.media(bytes, signature: [(0, "RIFF"), (8, "WAVE")])
        case .mediaFLAC: Self.media(bytes, signature: [(0, "fLaC")])
        case .mediaMP3: Self.media(bytes, signature: [(0, "ID3")])
        case .mediaOgg: Self.media(bytes, signature: [(0, "OggS")])
        case .mediaMP4: Self.media(bytes, signature: [(4, "ftyp")])
        case .mediaAAC: Self.media(Array([0xFF, 0xF1] + bytes.dropFirst(min(2, bytes.count))), signature: [])
        }
    }

    /// Besides surviving encoding, a vote or removal the quick read takes reads the same
    /// through `JSONDecoder`.
    private static func openJamFrame(_ data: Data) {
        if let quick = data.withUnsafeBytes({ ClientFrame.quickRead($0) }) {
            do {
                let plain = try WireCoding.decode(ClientFrame.self, from: data)
                guard plain == quick else { fatalError("the quick read took \(quick) where JSONDecoder read \(plain)") }
            } catch {
                fatalError("the quick read took \(quick) where JSONDecoder refused it: \(error)")
            }
        }
        guard let frame = try? ClientFrame.decode(data) else { return }
        let again = Data(frame.jsonString().utf8)
        guard let decoded = try? ClientFrame.decode(again), decoded == frame else {
            fatalError("a frame that decoded does not survive encoding: \(frame.jsonString())")
        }
    }

    /// Besides decoding, the JSON parser must read the text exactly as `JSONDecoder` does.
    private static func pirateRadioFrame(_ data: Data) {
        _ = PirateRadio.ClientMessage.decode(data)
        var repeatedKey = false
        let parsed = data.withUnsafeBytes { JSONValueParser.parse($0, repeatedKey: &repeatedKey) }
        // Where they differ by design: of a repeated key JSONDecoder keeps the first value and
        // never checks the one it drops, where the parser keeps the last, as JSON.parse does;
        // it takes a zero byte or a byte order mark up front for UTF-16 or UTF-32; and it needs
        // seconds for deep nesting (its cost grows with the cube of the depth: a hang here).
        let bytes = [UInt8](data.prefix(2))
        guard !repeatedKey, bytes.count < 2 || (bytes[0] != 0 && bytes[1] != 0 && bytes[0] != 0xFE && bytes[0] != 0xFF),
              data.count(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }) <= 64 else { return }
        let decoded = JSONValue.decoded(data)
        guard parsed == decoded else {
            fatalError("the JSON parser read \(String(describing: parsed)) where JSONDecoder read \(String(describing: decoded))")
        }
    }

    /// The first byte picks the body type, the rest is the JSON.
    private static func restBody(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        let data = Data(bytes.dropFirst())
        switch selector % 7 {
        case 0: roundTrip(GuestAuthRequest.self, data)
        case 1: roundTrip(CreateSessionRequest.self, data)
        case 2: roundTrip(JoinSessionRequest.self, data)
        case 3: roundTrip(UpdateSessionRequest.self, data)
        case 4: roundTrip(AddToQueue.self, data)
        case 5: roundTrip(VoteRequest.self, data)
        default: roundTrip(RoleRequest.self, data)
        }
    }

    private static func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ data: Data) {
        guard let value = try? WireCoding.decode(T.self, from: data) else { return }
        guard let encoded = try? WireCoding.encode(value), let again = try? WireCoding.decode(T.self, from: encoded), again == value else {
            fatalError("a \(T.self) that decoded does not survive encoding")
        }
    }

    /// Four bytes of file size, then the header text.
    private static func byteRange(_ bytes: [UInt8]) {
        guard bytes.count >= 4 else { return }
        let size = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) } & 0x7fff_ffff
        let header = String(decoding: bytes.dropFirst(4), as: UTF8.self)
        switch ByteRange(header: header, size: size) {
        case .whole, .unsatisfiable: break
        case .partial(let range):
            guard range.lowerBound >= 0, range.upperBound < size else {
                fatalError("\(range) is not inside a file of \(size) bytes (Range: \(header))")
            }
        }
    }

    private static func idsAndCodes(_ text: String) {
        if let id = JamID.uuid(text) {
            guard JamID.uuid(id.rawValue) == id, id.rawValue == id.rawValue.lowercased() else {
                fatalError("the UUID \(text) does not normalise to a fixed point")
            }
        }
        let code = JoinCodes.normalise(text)
        guard JoinCodes.normalise(code) == code else { fatalError("the code \(text) does not normalise to a fixed point") }
    }

    /// Reads `bytes` as an audio file, with the format's signature written over its start so
    /// every input reaches that format's reader.
    private static func media(_ bytes: [UInt8], signature: [(offset: Int, ascii: String)]) {
        var file = bytes
        for (offset, ascii) in signature {
            let magic = Array(ascii.utf8)
            if file.count < offset + magic.count { file += [UInt8](repeating: 0, count: offset + magic.count - file.count) }
            file.replaceSubrange(offset..<offset + magic.count, with: magic)
        }
        _ = try? AudioFile.read(bytes: file)
    }
}
