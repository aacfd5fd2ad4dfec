import Foundation
import JamCore
import JamProtocol
import JamServer
import NIOCore

/// A message from a QueueIT realtime socket: the socket only sends, so any message is answered
/// with an error saying so.
struct QueueITSocketMessage: DecodedMessage {}

/// How QueueIT sessions speak on their realtime socket: `{"event", "session_id", "data"}` with
/// `queue.updated`, `votes.updated`, `now_playing.updated` and `session.updated`, after which
/// its app reads `GET /sessions/current` again.
struct QueueITWire: SessionWire {
    /// Learns who left which session (kicked, or dropped after a long absence).
    let currentSessions: CurrentSessions?

    init(currentSessions: CurrentSessions?) {
        self.currentSessions = currentSessions
    }

    var socketsAreMembership: Bool { false }
    var replacedSocketClose: (code: UInt16, reason: String)? { nil }

    mutating func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame] {
        guard let last = events.last else { return [] }
        currentSessions?.observe(events, in: state.id)
        var votes: [QueueIT.EventData] = []
        var queueChanged = false, songChanged = false, sessionChanged = false
        for envelope in events {
            switch envelope.event {
            case .votesUpdate(let update):
                votes.append(QueueIT.EventData(queuedSongId: update.itemId.rawValue, totalVotes: update.score))
                // The vote moved its item: the queue's order changed, and no queueUpdate says so.
                if update.movedTo != nil { queueChanged = true }
            case .queueUpdate, .queueItemAdded, .queueItemRemoved:
                queueChanged = true
            case .playPrepare, .stopped:
                songChanged = true
                queueChanged = true
            case .playCommit, .pause, .resume, .seek:
                songChanged = true
            case .memberJoined, .memberLeft, .memberUpdated, .sessionUpdated, .skipRequests, .sessionEnded:
                sessionChanged = true
            case .stateSync, .pong, .ack, .error, .deviceDelay, .syncStatus, .calibration, .calibrationResult, .resync, .myChoices:
                break
            }
        }
        var frames: [WireFrame] = []
        func add(_ name: String, _ data: QueueIT.EventData) {
            frames.append(WireFrame(seq: last.seq, bytes: Self.frame(name, state: state, data), audience: .everyone, logged: false))
        }
        // What plays first, then the queue it left, then scores, then everything else.
        if songChanged { add("now_playing.updated", QueueIT.EventData(currentSong: QueueITViews.currentSong(state), carriesCurrentSong: true)) }
        if queueChanged { add("queue.updated", QueueIT.EventData(queue: QueueITViews.queue(state))) }
        for data in votes { add("votes.updated", data) }
        if sessionChanged { add("session.updated", QueueIT.EventData()) }
        return frames
    }

    func request(for message: any DecodedMessage, from user: UserID, state: SessionState, ids: any IDGenerator, now: Millis) -> SessionRequest {
        .reply(Self.frame("error", state: state, QueueIT.EventData(message: "this socket only sends events; change the session through the REST API")))
    }

    /// On connect: a nudge to read the session, which its app does on `session.updated`.
    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> ByteBuffer {
        Self.frame("session.updated", state: state, QueueIT.EventData())
    }

    func ack(_ ack: Ack, state: SessionState, now: Millis) -> ByteBuffer? { nil }

    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> ByteBuffer {
        Self.frame("error", state: state, QueueIT.EventData(message: error.message))
    }

    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> ByteBuffer {
        Self.frame("pong", state: state, QueueIT.EventData())
    }

    func passing(_ event: ServerEvent, state: SessionState, now: Millis) -> ByteBuffer? { nil }

    static func frame(_ name: String, state: SessionState, _ data: QueueIT.EventData) -> ByteBuffer {
        frame(name, sessionId: state.id.rawValue, data)
    }

    static func frame(_ name: String, sessionId: String, _ data: QueueIT.EventData) -> ByteBuffer {
        let event = QueueIT.Event(event: name, sessionId: sessionId, data: data)
        do {
            return ByteBuffer(bytes: try QueueIT.encode(event))
        } catch {
            // Only strings and numbers go in; encoding them cannot fail.
            preconditionFailure("a QueueIT event failed to encode: \(error)")
        }
    }
}
