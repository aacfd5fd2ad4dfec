import JamCore
import JamProtocol
import Testing

@testable import JamServer

/// A command a replica forwards reaches the owner as it came, with the checks it carries.
@Suite struct ForwardedCommandCodingTests {
    @Test func aSkipThatNamesItsSongIsForwardedWithTheSongsEpoch() throws {
        let user: UserID = "00000000-0000-0000-0008-00000000000a"
        let session: SessionID = "00000000-0000-0000-0008-000000000001"
        let command = Command.whileCurrent(epoch: 41, command: .skip)
        let sent = ForwardedCommand(inboxId: 0, session: session, origin: "node-b", connection: 7, replyId: "skip-1", command: command, user: user)
        let read = try ForwardedCommand.decode(
            inboxId: 3, session: session, origin: "node-b", connection: 7, replyId: "skip-1", input: sent.encodedInput)
        #expect(read.command == command)
        #expect(read.user == user)
    }
}
