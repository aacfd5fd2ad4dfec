import Foundation
import JamClient
import JamProtocol

/// Everything the live screen shows at one moment; `ScreenRenderer` turns it into lines.
struct ScreenModel: Sendable {
    /// What the keyboard is doing.
    enum Mode: Sendable, Equatable {
        case normal
        /// Typing a track to add: "Title - Artist".
        case adding(String)
        /// Searching the library: the query, the results, the chosen one.
        case searching(query: String, results: [Track], choice: Int)
        /// The invite (code, link, QR) over everything.
        case invite
        /// The host's settings over everything, with the chosen row.
        case settings(choice: Int)
        /// Asking whether to leave the session for good (`q` only closes the screen).
        case confirmingLeave
    }

    /// How to invite people.
    struct Invite: Sendable {
        var code: String
        var link: String
        var qrLines: [String]

        /// Whether the link names this computer itself (127.0.0.1, localhost, ::1), which no
        /// phone or other computer can open.
        var linksOnlyHere: Bool {
            guard let host = URLComponents(string: link)?.host?.lowercased() else { return false }
            return host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        }
    }

    var snapshot: StoreSnapshot = .empty
    /// The user at this terminal.
    var me: UserID?
    /// Server time now, once the clock is in sync.
    var serverNowMs: Double?
    /// "+12.3 ms ±1.1 ms, drift 0.02 ms/s" once the clock is in sync.
    var syncText: String?
    var selection = 0
    var mode: Mode = .normal
    /// A leave asked of the server and not answered yet.
    var leaving = false
    var message: String?
    /// Why the connection closed for good, once it has: keys then only say so.
    var closed: String?
    var invite: Invite?
    var rows = 24
    var columns = 80
    /// Every device's sync, as hosts receive it.
    var syncBoard: SyncStatusUpdate?
    /// The chosen row of the sync column.
    var syncSelection = 0
    /// The delays sent for each device that the board does not show yet (it reports every few
    /// seconds): a press steps from the last, so three quick presses are three steps.
    var sentDelays: [DeviceRef: SentDelays] = [:]

    /// Takes the store's latest snapshot: the selection follows its item when votes reorder
    /// the queue; a new refusal is the newest news, so it shows over a message from before
    /// ("Asked the device to re-sync."); a refused delay lets the next press step from what
    /// the board shows.
    mutating func take(_ newer: StoreSnapshot) {
        let selectedId = selectedItem?.id
        let refusedBefore = snapshot.lastRejection?.id
        snapshot = newer
        if let rejection = newer.lastRejection, rejection.id != refusedBefore {
            message = nil
            if rejection.action == LiveScreen.setDelayAction { sentDelays = [:] }
        }
        if let selectedId, let index = newer.queue.firstIndex(where: { $0.id == selectedId }) {
            selection = index
        }
        selection = min(selection, max(0, newer.queue.count - 1))
    }

    /// The selected queue item, if any.
    var selectedItem: StoreItem? {
        snapshot.queue.indices.contains(selection) ? snapshot.queue[selection] : nil
    }

    /// The chosen device of the sync column, if any.
    var selectedDevice: DeviceSyncStatus? {
        guard let devices = syncBoard?.devices, devices.indices.contains(syncSelection) else { return nil }
        return devices[syncSelection]
    }

    /// Milliseconds until this member may add again (0: now), by the session's add cooldown.
    var cooldownLeftMs: Int64 {
        guard let settings = snapshot.session?.settings, let me, let member = snapshot.members.first(where: { $0.userId == me }),
            let next = settings.nextAddAt(for: member), let now = serverNowMs
        else { return 0 }
        return max(0, next - Int64(now))
    }

    /// True for the host and co-hosts.
    var hasHostControls: Bool { snapshot.role?.hasHostControls == true }

    /// What leaving the session for good does, as the question asks it: the last member's
    /// leave ends the session, the host's hands hosting on, anybody else may join again.
    var leaveQuestion: String {
        let others = snapshot.members.contains { $0.userId != me }
        if !others { return "Leave and end the session? Its queue goes with it." }
        if snapshot.role == .host { return "Leave and hand hosting to somebody else?" }
        return snapshot.session.map { "Leave the session? Code \($0.joinCode) lets you join again." } ?? "Leave the session?"
    }
}

extension ScreenModel.Invite {
    /// The invite to `code` on `api`'s server: its link and that link's QR code.
    init(code: String, api: JamAPI) {
        let link = api.joinLink(code: code).absoluteString
        self.init(code: code, link: link, qrLines: InviteCode.lines(for: link))
    }
}
