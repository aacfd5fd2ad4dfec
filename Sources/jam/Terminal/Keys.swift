@preconcurrency import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key press.
enum Key: Equatable, Sendable {
    case character(Character)
    case up, down, left, right
    case enter, escape, backspace, tab
    case interrupt
}

/// Something for the live screen to react to.
enum TerminalInput: Sendable {
    case key(Key)
    case resized
    /// The terminal is gone (stdin closed, SIGHUP) or the process was asked to stop
    /// (SIGTERM): the screen ends whatever it shows.
    case hangUp
}

/// Key presses and resizes as an async stream, read on dispatch sources (no thread
/// blocks on stdin); the sources are cancelled when the stream ends.
enum TerminalInputs {
    static func stream() -> AsyncStream<TerminalInput> {
        let (stream, continuation) = AsyncStream.makeStream(of: TerminalInput.self)
        let queue = DispatchQueue(label: "openjam.terminal.input")
        let input = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: queue)
        let decoder = KeyDecoder()
        input.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            guard count > 0 else {
                // Nothing will ever be typed again: without this the screen would wait for a
                // quit key for ever, and the signals that follow would find the stream finished.
                continuation.yield(.hangUp)
                continuation.finish()
                return
            }
            for key in decoder.feed(buffer[0..<count]) { continuation.yield(.key(key)) }
        }
        signal(SIGWINCH, SIG_IGN)
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: queue)
        resize.setEventHandler { continuation.yield(.resized) }
        // A terminal closed or a `kill` still leaves through the normal exit, which restores the
        // terminal. In raw mode Ctrl-C is a key; SIGINT and SIGQUIT come only from `kill`.
        let stops = [SIGTERM, SIGHUP, SIGINT, SIGQUIT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(.hangUp) }
            return source
        }
        continuation.onTermination = { _ in
            input.cancel()
            resize.cancel()
            for source in stops { source.cancel() }
            // Once the screen is gone the signals stop the process again.
            for number in [SIGTERM, SIGHUP, SIGINT, SIGQUIT] { signal(number, SIG_DFL) }
        }
        input.resume()
        resize.resume()
        for source in stops { source.resume() }
        return stream
    }
}

/// Turns bytes into keys, including arrow escape sequences split across reads.
final class KeyDecoder: @unchecked Sendable {
    // Used only on the input queue.
    private var pending: [UInt8] = []

    func feed(_ bytes: ArraySlice<UInt8>) -> [Key] {
        pending += bytes
        var keys: [Key] = []
        while !pending.isEmpty {
            let byte = pending[0]
            if byte == 0x1B {
                if pending.count >= 2 && pending[1] == UInt8(ascii: "[") {
                    // A control sequence runs to its final byte (0x40–0x7E): Delete is
                    // `ESC [ 3 ~`, Ctrl+→ `ESC [ 1 ; 5 C`. All of it is one key, or none.
                    guard let end = pending.indices.dropFirst(2).first(where: { (0x40...0x7E).contains(pending[$0]) }) else { break }
                    switch pending[end] {
                    case UInt8(ascii: "A"): keys.append(.up)
                    case UInt8(ascii: "B"): keys.append(.down)
                    case UInt8(ascii: "C"): keys.append(.right)
                    case UInt8(ascii: "D"): keys.append(.left)
                    default: break
                    }
                    pending.removeFirst(end + 1)
                } else if pending.count == 1 {
                    keys.append(.escape)
                    pending.removeFirst()
                } else if pending[1] != UInt8(ascii: "[") {
                    keys.append(.escape)
                    pending.removeFirst()
                } else {
                    break
                }
                continue
            }
            pending.removeFirst()
            switch byte {
            case 0x03: keys.append(.interrupt)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x09: keys.append(.tab)
            default:
                if byte >= 0x20 && byte < 0x7F {
                    keys.append(.character(Character(UnicodeScalar(byte))))
                } else if byte >= 0xC0 {
                    // A UTF-8 sequence: take its continuation bytes with it.
                    let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                    let needed = length - 1
                    guard pending.count >= needed else {
                        pending.insert(byte, at: 0)
                        return keys
                    }
                    let sequence = [byte] + pending.prefix(needed)
                    pending.removeFirst(needed)
                    if let text = String(bytes: sequence, encoding: .utf8), let character = text.first {
                        keys.append(.character(character))
                    }
                }
            }
        }
        return keys
    }
}

import Foundation
