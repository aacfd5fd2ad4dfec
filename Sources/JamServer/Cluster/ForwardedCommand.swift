import Foundation
import JamCore
import JamProtocol

/// A command a node took from one of its members for a session another node owns: it waits
/// in the database's inbox until the owner applies it.
struct ForwardedCommand: Sendable, Equatable {
    /// The inbox row (0 until stored).
    var inboxId: Int64
    /// The session it is for.
    var session: SessionID
    /// The node the member is connected to, which answers them.
    var origin: String
    /// The member's socket on that node, when a socket sent it.
    var connection: ConnectionID?
    /// The id the answer carries; REST calls get one of their own so the origin can find it.
    var replyId: String?
    /// The command and who sent it.
    var command: Command
    var user: UserID

    /// The command as stored (a logged input, so one encoding serves the log and the inbox).
    var encodedInput: [UInt8] { LogCoding.encode([TimedInput(at: 0, .command(command, by: user))]) }

    /// Reads a stored row; throws when its input is not one command.
    static func decode(
        inboxId: Int64, session: SessionID, origin: String, connection: ConnectionID?, replyId: String?, input: [UInt8]
    ) throws -> ForwardedCommand {
        let inputs = try LogCoding.decodeInputs(input)
        guard inputs.count == 1, case .command(let command, let user) = inputs[0].input else {
            throw JamError(.malformed, "a forwarded command must hold exactly one command")
        }
        return ForwardedCommand(
            inboxId: inboxId, session: session, origin: origin, connection: connection, replyId: replyId, command: command, user: user)
    }
}

/// The owner's answer to a forwarded command that no record carries: a refusal, or an ack
/// for a command that changed nothing. Sent to the origin node as a notification.
struct ForwardReply: Codable, Sendable, Equatable {
    /// The node the member is connected to.
    var node: String
    var session: SessionID
    /// `LiveSession.answerKey` of the command.
    var key: String
    /// The member's socket, when a socket sent the command.
    var connection: ConnectionID?
    /// The answer as the member's protocol writes it.
    var frame: String
    /// The socket command it answers (`RequestFingerprint.forSocket`): its id may have been
    /// sent with another command once the origin's wait ran out. Absent from a REST call's
    /// reply, and from an owner of an earlier release.
    var command: UInt64?
    /// Set when the command was refused: its code and message.
    var errorCode: ErrorCode?
    var errorMessage: String?

    /// The refusal, if it was one.
    var error: JamError? { errorCode.map { JamError($0, errorMessage ?? "") } }
}
