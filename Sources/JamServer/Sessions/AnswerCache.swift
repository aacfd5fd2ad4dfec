import NIOCore

/// The answers to a session's recent command ids ("user id" keys), so a client that resends
/// a command after a reconnect gets the same answer instead of a second application.
struct AnswerCache {
    /// Most answers kept.
    static let limit = 2048

    private var answers: [String: ByteBuffer] = [:]
    private var order: [String] = []
    private var head = 0

    /// The answer `key` got, if it is still kept.
    subscript(key: String) -> ByteBuffer? { answers[key] }

    /// Keeps `answer` for `key`, forgetting the oldest beyond the limit.
    mutating func remember(_ answer: ByteBuffer, for key: String) {
        if answers.updateValue(answer, forKey: key) == nil { order.append(key) }
        while order.count - head > Self.limit {
            answers[order[head]] = nil
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
}
