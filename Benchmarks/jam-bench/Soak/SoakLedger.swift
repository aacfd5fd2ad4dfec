import JamProtocol

/// What the server acknowledged during a soak, and what it refused: the ground truth the
/// end of the run checks the server and every client against.
actor SoakLedger {
    /// An add the server acknowledged.
    struct Add: Sendable {
        let member: Int
        let nonce: String
        let track: Track
        let itemId: ItemID
    }

    private(set) var adds: [Add] = []
    /// The last acknowledged vote of each member on each item.
    private(set) var votes: [Int: [ItemID: Int]] = [:]
    private(set) var acknowledged: [String: Int] = [:]
    private(set) var refused: [String: Int] = [:]
    private(set) var reconnects = 0
    private(set) var joins = 0
    /// Members whose connection the server ended for good, and why.
    private(set) var dropped: [Int: String] = [:]

    func added(_ add: Add) {
        adds.append(add)
        acknowledged["addToQueue", default: 0] += 1
    }

    func voted(member: Int, item: ItemID, value: Int) {
        votes[member, default: [:]][item] = value
        acknowledged["vote", default: 0] += 1
    }

    func acked(_ kind: String) { acknowledged[kind, default: 0] += 1 }
    func refusedWith(_ code: ErrorCode) { refused[code.rawValue, default: 0] += 1 }
    func reconnected() { reconnects += 1 }
    func joined() { joins += 1 }
    func droppedForGood(member: Int, reason: String) { dropped[member] = reason }
}
