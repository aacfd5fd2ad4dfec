import NIOCore

/// The answers to a session's recent command ids ("user id" keys), so a client that resends
/// a command after a reconnect gets the same answer instead of a second application.
///
/// A REST call's idempotency key is an id of the form `key:<kind>:<key> <fingerprint>`
/// (`LiveSession.replyId(for:_:)`): the cache also knows, per key without its fingerprint,
/// which request the key was first sent with, so the key sent with another is told apart
/// from the same request sent again.
struct AnswerCache {
    /// Most answers kept.
    static let limit = 2048

    private var answers: [String: ByteBuffer] = [:]
    private var order: [String] = []
    private var head = 0
    /// The fingerprint each kept idempotency key's answer was for, by its key without it.
    private var fingerprints: [Substring: Substring] = [:]

    /// What the cache holds for a command id.
    enum Lookup: Equatable {
        /// The answer it got: the same command sent again.
        case answered(ByteBuffer)
        /// Its idempotency key answered another request (another fingerprint).
        case keyUsedForAnotherRequest
        /// Nothing: a command not seen, or not within the last `limit` answers.
        case none
    }

    /// The answer `key` got, if it is still kept.
    subscript(key: String) -> ByteBuffer? { answers[key] }

    /// What `key` finds: its answer; else, for an idempotency key, the answer the key got
    /// before fingerprints were kept (any request under it is the one answered), or whether
    /// it answered another request.
    func lookup(_ key: String) -> Lookup {
        if let answer = answers[key] { return .answered(answer) }
        guard let (base, _) = Self.keyedParts(key) else { return .none }
        if let answer = answers[String(base)] { return .answered(answer) }
        return fingerprints[base] == nil ? .none : .keyUsedForAnotherRequest
    }

    /// Keeps `answer` for `key`, forgetting the oldest beyond the limit.
    mutating func remember(_ answer: ByteBuffer, for key: String) {
        if answers.updateValue(answer, forKey: key) == nil {
            order.append(key)
            if let (base, fingerprint) = Self.keyedParts(key) { fingerprints[base] = fingerprint }
        }
        while order.count - head > Self.limit {
            let oldest = order[head]
            answers[oldest] = nil
            if let (base, fingerprint) = Self.keyedParts(oldest), fingerprints[base] == fingerprint { fingerprints[base] = nil }
            head += 1
        }
        if head > Self.limit {
            order.removeFirst(head)
            head = 0
        }
    }

    /// The kept answers, oldest first (a snapshot stores them).
    var stored: [StoredAnswer] {
        order[head...].compactMap { key in answers[key].map { StoredAnswer(key: key, frame: String(buffer: WebSocketText.payload(of: $0))) } }
    }

    /// An idempotency key's answer key split at its fingerprint: `user key:kind:key` and the
    /// fingerprint; nil for any other id, and for a key kept before fingerprints were. Read
    /// from the right, as a user id may hold spaces (a compatibility profile's token names any
    /// user) and keys hold none: the fingerprint is the 16 hex digits after the last space,
    /// and the key's prefix starts the word before it.
    static func keyedParts(_ key: String) -> (base: Substring, fingerprint: Substring)? {
        guard let mark = key.lastIndex(of: " ") else { return nil }
        let fingerprint = key[key.index(after: mark)...]
        guard fingerprint.utf8.count == RequestFingerprint.length, fingerprint.utf8.allSatisfy(Self.isLowercaseHex) else { return nil }
        let base = key[..<mark]
        guard let wordStart = base.lastIndex(of: " "), base[base.index(after: wordStart)...].hasPrefix(LiveSession.keyPrefix) else { return nil }
        return (base, fingerprint)
    }

    private static func isLowercaseHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
