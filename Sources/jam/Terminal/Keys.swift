@preconcurrency import Dispatch
import Foundation
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
    /// Alt+Backspace or Ctrl+W: the word before the cursor goes, as in a shell.
    case deleteWord
    /// Alt with a key (`ESC` then the key, as terminals send it): no key of the screen's, so
    /// no command, and no Escape that would close a prompt.
    case alt(Character)
    case interrupt
    /// Text the terminal says was pasted (bracketed paste), newlines and all: it is text for a
    /// prompt, never keys to act on.
    case paste(String)
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
            for key in decoder.feed(buffer[0..<count], filledTheRead: count == buffer.count) { continuation.yield(.key(key)) }
            // An ESC alone may be the start of an arrow key whose rest is still on its way (a
            // slow ssh link), and a paste may still be coming: each ends if nothing follows.
            if let (read, wait) = decoder.waiting {
                queue.asyncAfter(deadline: .now() + wait) {
                    for key in decoder.timedOut(read) { continuation.yield(.key(key)) }
                }
            }
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

/// Turns bytes into keys, including arrow escape sequences split across reads and text
/// pasted between the terminal's bracketed-paste marks.
final class KeyDecoder: @unchecked Sendable {
    /// How long an ESC alone waits for the rest of a sequence before it counts as Escape:
    /// `ESCDELAY` (ms), as for programs built on ncurses, else 200 ms (readline waits 500,
    /// vim commonly 100; a press of Escape should still feel at once).
    let escapeWait: DispatchTimeInterval
    /// How long a paste whose end mark has not come waits for more before it ends as it is:
    /// a terminal that dropped the mark must not leave every later key, Ctrl-C included,
    /// taken as pasted text.
    static let pasteWait: DispatchTimeInterval = .seconds(2)
    /// The most of one paste kept: far more than any title, and a bound on what a runaway
    /// paste (a whole file) holds in memory.
    static let pasteLimit = 16 * 1024
    private static let pasteEnd: [UInt8] = Array("\u{1B}[201~".utf8)

    // Used only on the input queue.
    private var pending: [UInt8] = []
    /// The paste under way, between `ESC [ 200 ~` and `ESC [ 201 ~`.
    private var pasted: [UInt8]?
    /// Counts the reads fed, so that a wait knows whether anything came since it began.
    private var reads = 0
    /// Whether the last read filled its buffer.
    private var lastReadWasFull = false

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let delay = environment["ESCDELAY"].flatMap(Int.init).map { min(max($0, 0), 10_000) }
        escapeWait = .milliseconds(delay ?? 200)
    }

    /// What waits for more bytes after the last read, and for how long: an ESC alone, or a
    /// paste without its end. Nil when nothing does.
    var waiting: (read: Int, wait: DispatchTimeInterval)? {
        if pasted != nil { return (reads, Self.pasteWait) }
        return pending == [0x1B] ? (reads, escapeWait) : nil
    }

    /// A wait that began after read number `read` ended: when nothing came since, an ESC alone
    /// is Escape and a paste ends with what it has.
    func timedOut(_ read: Int) -> [Key] {
        guard read == reads else { return [] }
        if pasted != nil {
            pasted! += pending
            pending = []
            return [finishPaste()]
        }
        guard pending == [0x1B] else { return [] }
        pending = []
        return [.escape]
    }

    /// The keys `bytes` complete; `filledTheRead` says the read took all it could, so more
    /// of the same write may follow at once.
    func feed(_ bytes: ArraySlice<UInt8>, filledTheRead: Bool = false) -> [Key] {
        reads += 1
        // Alt writes its ESC and its key at once; an ESC that ended the last read alone was
        // Escape, pressed on its own, unless a sequence (an arrow split across reads) follows,
        // or that read was full and cut a write in two.
        let escapeAlone = pending == [0x1B] && !lastReadWasFull
        lastReadWasFull = filledTheRead
        pending += bytes
        return decode(escapeAlone: escapeAlone)
    }

    private func decode(escapeAlone: Bool) -> [Key] {
        var keys: [Key] = []
        // Only the first byte can be the ESC the last read ended with.
        var first = escapeAlone
        while !pending.isEmpty {
            let escapeAlone = first
            first = false
            if pasted != nil {
                guard let paste = takePaste() else { break }
                keys.append(paste)
                continue
            }
            let byte = pending[0]
            if byte == 0x1B {
                // ESC alone: the rest of a sequence may still come (`waiting`).
                guard pending.count >= 2 else { break }
                guard pending[1] == UInt8(ascii: "[") else {
                    // Alt sends ESC before its key: Alt+d must not be Escape, then "remove".
                    switch pending[1] {
                    case _ where escapeAlone:
                        keys.append(.escape)
                        pending.removeFirst()
                    case UInt8(ascii: "O") where pending.count >= 3 && (0x40...0x7E).contains(pending[2]):
                        // SS3: F1–F4 (`ESC O P`…`S`), and the arrows in application mode.
                        switch pending[2] {
                        case UInt8(ascii: "A"): keys.append(.up)
                        case UInt8(ascii: "B"): keys.append(.down)
                        case UInt8(ascii: "C"): keys.append(.right)
                        case UInt8(ascii: "D"): keys.append(.left)
                        default: break
                        }
                        pending.removeFirst(3)
                    case 0x7F, 0x08:
                        keys.append(.deleteWord)
                        pending.removeFirst(2)
                    case 0x20..<0x7F:
                        keys.append(.alt(Character(UnicodeScalar(pending[1]))))
                        pending.removeFirst(2)
                    default:
                        keys.append(.escape)
                        pending.removeFirst()
                    }
                    continue
                }
                // A control sequence runs through parameter bytes (0x20–0x3F) to its final byte
                // (0x40–0x7E): Delete is `ESC [ 3 ~`, Ctrl+→ `ESC [ 1 ; 5 C`. All of it is one
                // key, or none; any other byte means it was no sequence, but Escape and `[`.
                guard let end = pending.indices.dropFirst(2).first(where: { !(0x20...0x3F).contains(pending[$0]) }) else { break }
                guard (0x40...0x7E).contains(pending[end]) else {
                    keys.append(.escape)
                    pending.removeFirst()
                    continue
                }
                switch pending[end] {
                case UInt8(ascii: "A"): keys.append(.up)
                case UInt8(ascii: "B"): keys.append(.down)
                case UInt8(ascii: "C"): keys.append(.right)
                case UInt8(ascii: "D"): keys.append(.left)
                case UInt8(ascii: "~") where Array(pending[2..<end]) == Array("200".utf8): pasted = []
                default: break
                }
                pending.removeFirst(end + 1)
                continue
            }
            pending.removeFirst()
            switch byte {
            case 0x03: keys.append(.interrupt)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x17: keys.append(.deleteWord)
            case 0x09: keys.append(.tab)
            default:
                if byte >= 0x20 && byte < 0x7F {
                    keys.append(.character(Character(UnicodeScalar(byte))))
                } else if byte >= 0xC0 {
                    // A UTF-8 sequence: take its continuation bytes with it. A lead byte without
                    // them (an 8-bit Alt) is dropped, so it cannot swallow an ESC that follows.
                    let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                    let needed = length - 1
                    guard pending.prefix(needed).allSatisfy({ (0x80...0xBF).contains($0) }) else { continue }
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

    /// The paste, once its end mark has come; until then its bytes are kept (all but what
    /// may be the start of a mark split across reads).
    private func takePaste() -> Key? {
        guard let text = pasted else { return nil }
        let mark = Self.pasteEnd
        let found = pending.count >= mark.count
            ? (0...(pending.count - mark.count)).first(where: { pending[$0..<($0 + mark.count)].elementsEqual(mark) })
            : nil
        let taken = found ?? max(0, pending.count - (mark.count - 1))
        pasted = text + pending[..<taken].prefix(max(0, Self.pasteLimit - text.count))
        pending.removeFirst(found.map { $0 + mark.count } ?? taken)
        return found == nil ? nil : finishPaste()
    }

    /// The paste under way as text; cut at the limit, it ends at its last whole character.
    private func finishPaste() -> Key {
        let bytes = (pasted ?? []).prefix(Self.pasteLimit)
        pasted = nil
        var text = String(decoding: bytes, as: UTF8.self)
        if bytes.count == Self.pasteLimit, text.last == "\u{FFFD}" { text.removeLast() }
        return .paste(text)
    }
}

