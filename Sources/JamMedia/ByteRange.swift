import Foundation

/// One `Range: bytes=…` request resolved against a file's size (RFC 9110 §14).
///
/// Only single ranges are served as 206; a list of ranges is answered with the whole
/// file (which the RFC allows), so players that probe with several ranges still play.
package enum ByteRange: Equatable {
    /// No usable range: send the whole file with 200.
    case whole
    /// Send `bytes` with 206.
    case partial(ClosedRange<Int>)
    /// Nothing of the file is in the range: 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Resolves `header` (the `Range` value, if any) for a file of `size` bytes.
    /// A header that is not a byte range at all is ignored, as the RFC asks.
    package init(header: String?, size: Int) {
        guard let header else { self = .whole; return }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes=") else { self = .whole; return }
        let spec = trimmed.dropFirst("bytes=".count)
        guard !spec.contains(",") else { self = .whole; return }
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2 else { self = .whole; return }
        switch (Self.position(parts[0]), Self.position(parts[1]), parts[0].isEmpty, parts[1].isEmpty) {
        case (let first?, nil, false, true):
            // "bytes=500-": from 500 to the end.
            self = first < size ? .partial(first...(size - 1)) : .unsatisfiable
        case (let first?, let last?, false, false):
            guard first <= last else { self = .whole; return }
            self = first < size ? .partial(first...min(last, size - 1)) : .unsatisfiable
        case (nil, let suffix?, true, false):
            // "bytes=-500": the last 500 bytes.
            guard suffix > 0, size > 0 else { self = .unsatisfiable; return }
            self = .partial(max(0, size - suffix)...(size - 1))
        default:
            self = .whole
        }
    }

    /// A byte position: digits only (no sign), and one past any file's size when it has more
    /// digits than an `Int` holds, so "bytes=0-99999999999999999999" means "to the end".
    private static func position(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(text) ?? Int.max
    }
}

