import Foundation
import JamClient
import Synchronization
import Testing

/// A transport that loses the server's answer to one message: armed with a marker, it notes
/// the id of the next message holding it, and closes that socket when the answer to that id
/// comes, before the client reads it; the next connection waits until the test lets it go.
/// So the message reaches the server, the client never learns so, and it sends the message
/// again once it is back.
struct AnswerLosingTransport: RealtimeTransport {
    let inner: any RealtimeTransport
    let control = Control()

    /// What the test arms and releases; shared by every socket the transport opens.
    final class Control: Sendable {
        private struct State {
            var marker: String?
            var socket = 0
            /// The id of the marked message, whose answer cuts the socket it comes on.
            var answer: String?
            var cutSocket: Int?
            var holding = false
            /// Once let go, no later cut holds a connection back.
            var released = false
            var waiting: [CheckedContinuation<Void, Never>] = []
        }
        private let state = Mutex(State())

        /// The next message sent that contains `marker` loses its answer.
        func arm(_ marker: String) { state.withLock { $0.marker = marker } }

        /// Lets the connection after the cut open.
        func reconnect() {
            let waiting = state.withLock { state in
                state.holding = false
                state.released = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiter in waiting { waiter.resume() }
        }

        fileprivate func opening() async -> Int {
            await withCheckedContinuation { continuation in
                let open = state.withLock { state in
                    if state.holding { state.waiting.append(continuation) }
                    return !state.holding
                }
                if open { continuation.resume() }
            }
            return state.withLock { state in
                state.socket += 1
                return state.socket
            }
        }

        fileprivate func sending(_ text: String, on socket: Int) {
            state.withLock { state in
                guard let marker = state.marker, text.contains(marker), let id = Self.id(of: text) else { return }
                state.marker = nil
                state.answer = id
            }
        }

        /// Whether the marked message's answer was lost.
        var hasCut: Bool { state.withLock { $0.cutSocket != nil } }

        /// Whether `text`, read on `socket`, is the marked message's answer or comes after it.
        fileprivate func cuts(_ text: String, on socket: Int) -> Bool {
            state.withLock { state in
                if state.cutSocket == socket { return true }
                // On whichever socket it comes: one that dropped on its own sends the message again.
                guard let answer = state.answer, text.contains(#""id":"\#(answer)""#),
                    text.contains(#""type":"ack""#) || text.contains(#""type":"error""#)
                else { return false }
                state.answer = nil
                state.cutSocket = socket
                state.holding = !state.released
                return true
            }
        }

        private static func id(of text: String) -> String? {
            do {
                return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["id"] as? String
            } catch {
                Issue.record("the client sent a message that is not JSON: \(text)")
                return nil
            }
        }
    }

    private struct Socket: RealtimeSocket {
        let inner: any RealtimeSocket
        let number: Int
        let control: Control

        func receive() async throws -> String? {
            guard let text = try await inner.receive() else { return nil }
            guard control.cuts(text, on: number) else { return text }
            // The connection ends before the answer is read, as a dropped one does.
            await inner.close()
            return nil
        }

        func send(_ text: String) async throws {
            // Noted before it goes: the answer can come back before the send returns.
            control.sending(text, on: number)
            try await inner.send(text)
        }

        func close() async { await inner.close() }

        func abandon() async { await inner.abandon() }
    }

    func withSocket(
        url: URL, headers: [String: String], _ body: @escaping @Sendable (any RealtimeSocket) async throws -> Void
    ) async throws -> RealtimeClose {
        let number = await control.opening()
        let control = control
        return try await inner.withSocket(url: url, headers: headers) { socket in
            try await body(Socket(inner: socket, number: number, control: control))
        }
    }
}
