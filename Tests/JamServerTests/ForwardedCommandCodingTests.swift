import Foundation
import JamCore
import JamProtocol
import Testing

@testable import JamServer

/// A command a replica forwards reaches the owner as it came, with the checks it carries,
/// and the owner's reply names the command it answers.
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

    @Test func anOwnersReplyNamesTheCommandItAnswersToTheLastBit() throws {
        let session: SessionID = "00000000-0000-0000-0008-000000000001"
        // Beyond 2^53, where a reading through a Double would round it to another command.
        let fingerprint = UInt64.max - 12_345
        let sent = ForwardReply(node: "node-b", session: session, key: "k", connection: 7, frame: "{}", command: fingerprint)
        let read = try JSONDecoder().decode(ForwardReply.self, from: JSONEncoder().encode(sent))
        #expect(read == sent)
        #expect(read.command == fingerprint)
    }

    @Test func aReplyFromAnOwnerOfAnEarlierReleaseNamesNoCommand() throws {
        let payload = #"{"node":"node-b","session":"00000000-0000-0000-0008-000000000001","key":"k","connection":7,"frame":"{}"}"#
        let read = try JSONDecoder().decode(ForwardReply.self, from: Data(payload.utf8))
        #expect(read.command == nil)
        #expect(read.connection == 7)
    }
}
