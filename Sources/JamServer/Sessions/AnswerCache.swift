import JamCore
import NIOCore

/// The answers to a session's recent command ids ("user id" keys), so a client that resends
/// a command after a reconnect gets the same answer instead of a second application.
///
/// A REST call's idempotency key is an id of the form `key:<kind>:<key> <fingerprint>`
/// (`LiveSession.replyId(for:_:)`): the cache also knows, per key without its fingerprint,
/// which request the key was first sent with, so the key sent with another is told apart
/// from the same request sent again. A socket's command id is kept with the fingerprint of
/// the command it answered (`RequestFingerprint`), for the same reason.
struct AnswerCache {
    /// Most answers kept of commands that change the session.
    static let limit = 2048
    /// Most answers kept of a device's reports, apart from the others.
    static let reportLimit = 256

    /// Which list an answer is kept in. A device's reports (`ready`, `syncReport`) come all
    /// along from every device and change nothing more when applied again: kept with the
    /// others, one member's devices could push out a host's answer within two minutes, and
    /// the host's retried skip would skip a second song.
    enum Lane {
        case change, report

        /// The lane of `command`'s answer.
        init(of command: Command) {
            switch command {
            case .ready, .syncReport: self = .report
            case .whileCurrent(_, let command): self = Lane(of: command)
            case .all(let commands): self = commands.allSatisfy { Lane(of: $0) == .report } ? .report : .change
            case .join, .leave, .connect, .disconnect, .add, .remove, .vote, .skip, .requestSkip, .withdrawSkipRequest, .finish, .play,
                .pause, .resume, .seek, .updateSettings, .setRole, .kick, .setDeviceDelay, .setJoinCode, .end, .djPrepare, .djTimeline:
                self = .change
            }
        }

        /// The lane of `input`'s answer (only commands are answered).
        init(of input: SessionInput) {
            if case .command(let command, _) = input { self = Lane(of: command) } else { self = .change }
        }

        /// The lane of a logged turn's answer: its first input is the command it answered.
        init(of record: [TimedInput]) {
            self = record.first.map { Lane(of: $0.input) } ?? .change
        }
    }

    /// The fingerprint a logged answer under `key` is kept with: for a socket's command id,
    /// that of the command it answered, the turn's `first` input.
    static func fingerprint(ofLogged key: String, answering first: SessionInput?) -> UInt64? {
        guard case .command(let command, _)? = first, LiveSession.isSocketId(answerKey: key) else { return nil }
        return RequestFingerprint.forSocket(command)
    }

    /// One lane's keys, oldest first from `head` on.
    private struct Order {
        let limit: Int
        var keys: [String] = []
        var head = 0
        var kept: ArraySlice<String> { keys[head...] }
    }

    private var answers: [String: ByteBuffer] = [:]
    private var changes = Order(limit: Self.limit)
    private var reports = Order(limit: Self.reportLimit)
    /// The fingerprint each kept idempotency key's answer was for, by its key without it.
    private var fingerprints: [Substring: Substring] = [:]
    /// The fingerprint of the request each kept socket command id's answer was for, by its
    /// answer key; absent where it is not known (an answer an older release stored, an
    /// owner's reply this node no longer waited for).
    private var commands: [String: UInt64] = [:]

    /// What the cache holds for a command id.
    enum Lookup: Equatable {
        /// The answer it got: the same command sent again.
        case answered(ByteBuffer)
        /// Its idempotency key answered another request (another fingerprint).
        case keyUsedForAnotherRequest
        /// Nothing: a command not seen, or not within the last answers of its lane.
        case none
    }

    /// The answer `key` got, if it is still kept.
    subscript(key: String) -> ByteBuffer? { answers[key] }

    /// What a socket's request sent under `key` with `fingerprint` (`RequestFingerprint.forSocket`)
    /// finds: the answer of the same request sent before, or that the id answered another one.
    /// An answer kept without its request's fingerprint answers whatever is sent.
    func lookup(_ key: String, sentWith fingerprint: @autoclosure () -> UInt64) -> Lookup {
        guard let answer = answers[key] else { return .none }
        guard let kept = commands[key] else { return .answered(answer) }
        // Hashed only here, on a resend: the command path keeps the first one's fingerprint.
        return fingerprint() == kept ? .answered(answer) : .keyUsedForAnotherRequest
    }

    /// What `key` finds: its answer; else, for an idempotency key, the answer the key got
    /// before fingerprints were kept (any request under it is the one answered), or whether
    /// it answered another request.
    func lookup(_ key: String) -> Lookup {
        if let answer = answers[key] { return .answered(answer) }
        guard let (base, _) = Self.keyedParts(key) else { return .none }
        if let answer = answers[String(base)] { return .answered(answer) }
        return fingerprints[base] == nil ? .none : .keyUsedForAnotherRequest
    }

    /// Keeps `answer` for `key` in `lane`, with the fingerprint of the socket command it
    /// answered when known, forgetting that lane's oldest beyond its limit.
    mutating func remember(_ answer: ByteBuffer, for key: String, lane: Lane = .change, command: UInt64? = nil) {
        switch lane {
        case .change: Self.remember(answer, for: key, command: command, in: &changes, answers: &answers, fingerprints: &fingerprints, commands: &commands)
        case .report: Self.remember(answer, for: key, command: command, in: &reports, answers: &answers, fingerprints: &fingerprints, commands: &commands)
        }
    }

    private static func remember(
        _ answer: ByteBuffer, for key: String, command: UInt64?, in order: inout Order, answers: inout [String: ByteBuffer],
        fingerprints: inout [Substring: Substring], commands: inout [String: UInt64]
    ) {
        if answers.updateValue(answer, forKey: key) == nil {
            order.keys.append(key)
            if let (base, fingerprint) = keyedParts(key) { fingerprints[base] = fingerprint }
        }
        if let command { commands[key] = command }
        while order.keys.count - order.head > order.limit {
            let oldest = order.keys[order.head]
            answers[oldest] = nil
            commands[oldest] = nil
            if let (base, fingerprint) = keyedParts(oldest), fingerprints[base] == fingerprint { fingerprints[base] = nil }
            order.head += 1
        }
        if order.head > order.limit {
            order.keys.removeFirst(order.head)
            order.head = 0
        }
    }

    /// The kept answers, oldest first in each lane (a snapshot stores them), each marked with
    /// its lane.
    var stored: [StoredAnswer] {
        let kept = { (key: String, report: Bool?) in
            self.answers[key].map {
                StoredAnswer(
                    key: key, frame: String(buffer: WebSocketText.payload(of: $0)), report: report,
                    command: self.commands[key].map(RequestFingerprint.text))
            }
        }
        return changes.kept.compactMap { kept($0, nil) } + reports.kept.compactMap { kept($0, true) }
    }

    /// An empty cache.
    init() {}

    /// The answers a snapshot stored, each back in its lane.
    init(restoring stored: [StoredAnswer]) {
        for answer in stored { remember(answer, lane: answer.report == true ? .report : .change) }
    }

    /// Keeps an answer read back from the store in `lane`, with the fingerprint of the
    /// socket command it answered: the one a snapshot stored it with, or for a record's
    /// answer that of the record's `first` input (`fingerprint(ofLogged:answering:)`).
    mutating func remember(_ answer: StoredAnswer, lane: Lane, answering first: SessionInput? = nil) {
        let fingerprint = answer.command.flatMap(RequestFingerprint.value) ?? Self.fingerprint(ofLogged: answer.key, answering: first)
        remember(WebSocketText.frame(Array(answer.frame.utf8)), for: answer.key, lane: lane, command: fingerprint)
    }

    /// An idempotency key's answer key split at its fingerprint: `user key:kind:key` and the
    /// fingerprint; nil for any other id, and for a key kept before fingerprints were. Read
    /// from the right, as a user id may hold spaces (a compatibility profile's token names any
    /// user) and keys hold none: the fingerprint is the 16 hex digits after the last space,
    /// and the key's prefix starts the word before it.
    static func keyedParts(_ key: String) -> (base: Substring, fingerprint: Substring)? {
        guard let mark = key.lastIndex(of: " ") else { return nil }
        let fingerprint = key[key.index(after: mark)...]
        guard RequestFingerprint.isText(fingerprint) else { return nil }
        let base = key[..<mark]
        guard let wordStart = base.lastIndex(of: " "), base[base.index(after: wordStart)...].hasPrefix(LiveSession.keyPrefix) else { return nil }
        return (base, fingerprint)
    }
}
