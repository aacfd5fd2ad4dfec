import JamClient
import JamProtocol

/// Renders the live screen as plain lines that fit the terminal (a pure function, so it is
/// testable without a terminal).
enum ScreenRenderer {
    /// Search results shown (and choosable) at once.
    static let searchResultsShown = 6

    static func render(_ model: ScreenModel) -> [String] {
        // The terminal's own width, however narrow: wider lines would wrap and scroll the screen.
        let width = max(1, model.columns)
        if model.mode == .invite, let invite = model.invite {
            return fit(inviteLines(invite, width: width), rows: model.rows, width: width)
        }
        if case .settings(let choice) = model.mode, let settings = model.snapshot.session?.settings {
            var lines = settingsLines(settings, choice: choice)
            if let rejection = model.snapshot.lastRejection { lines += ["", "✗ \(rejection.action) refused: \(rejection.message)"] }
            return fit(lines, rows: model.rows, width: width)
        }
        var lines: [String] = []
        let snapshot = model.snapshot
        let title = snapshot.session.map { "OpenJam · \($0.name)" } ?? "OpenJam"
        // The connection first: of what a narrow line keeps, it matters most.
        var status = [phaseText(snapshot.phase)]
        if let code = snapshot.session?.joinCode { status.append("code \(code)") }
        if let sync = model.syncText { status.append("sync \(sync)") }
        lines.append(spread(title, status.joined(separator: " · "), width: width))
        lines.append(rule(width))
        lines += nowPlayingLines(model, width: width)
        lines.append(rule(width))
        let wait = model.cooldownLeftMs
        lines.append("Queue (\(snapshot.queue.count))" + (wait > 0 ? " · your next add in \(clock(wait + 999))" : ""))
        let syncLines = model.hasHostControls ? SyncColumn.lines(model.syncBoard, members: snapshot.members, selection: model.syncSelection) : []
        // The foot first: what the queue may take is what the foot and the members leave, so a
        // search's results and the keys always show (Enter adds what the person sees).
        let foot = footLines(model, width: width, withSyncKeys: !syncLines.isEmpty)
        let below = 3 + (syncLines.isEmpty ? 0 : syncLines.count + 1) + (snapshot.history.isEmpty ? 0 : 1)
        let room = max(1, model.rows - lines.count - below - foot.count)
        let queueLines = queue(model, width: width)
        if queueLines.isEmpty {
            lines.append("  (empty — press a to add a song)")
        } else {
            let start = max(0, min(model.selection - room / 2, queueLines.count - room))
            lines += queueLines[start..<min(queueLines.count, start + room)]
        }
        if let played = historyLine(snapshot.history, viewer: model.me) { lines.append(played) }
        lines.append(rule(width))
        lines.append(membersLine(snapshot, width: width))
        if !syncLines.isEmpty {
            lines.append(rule(width))
            lines += syncLines
        }
        lines.append(rule(width))
        // Too many rows still (a short terminal, a long sync column): the middle gives way,
        // never the foot, whose results Enter adds and whose keys are the way out.
        return fit(Array(lines.prefix(max(0, model.rows - foot.count))) + foot, rows: model.rows, width: width)
    }

    /// The screen's foot: what the keyboard is doing (a prompt, search results, a question or
    /// the latest news) and the keys, wrapped to the width so none is cut off.
    static func footLines(_ model: ScreenModel, width: Int, withSyncKeys: Bool) -> [String] {
        let snapshot = model.snapshot
        var lines: [String] = []
        switch model.mode {
        case .adding(let text):
            lines.append("Add (title - artist): \(text)█")
            if let message = model.message { lines.append(message) }
        case .searching(let query, let results, let choice):
            lines.append("Search the library: \(query)█   (Enter: search / add the chosen one, ↑↓ choose, Esc cancel)")
            for (index, track) in results.prefix(searchResultsShown).enumerated() {
                lines.append("\(index == choice ? "›" : " ") \(track.name) — \(track.artist)  \(clock(track.durationMs ?? 0))")
            }
            // "Nothing in the library matches", or why the search failed.
            if let message = model.message { lines.append(message) }
        case .confirmingLeave:
            lines.append("\(model.leaveQuestion)  y: leave  any other key: stay  (quitting with q keeps you a member)")
        case .normal, .invite, .settings:
            // The message is the newer news (the next key clears it): a closed connection
            // must not hide behind a refusal from before.
            if let message = model.message {
                lines.append(message)
            } else if let rejection = snapshot.lastRejection {
                lines.append("✗ \(rejection.action) refused: \(rejection.message)")
            } else if snapshot.ended {
                lines.append("The session has ended.")
            } else {
                lines.append("")
            }
        }
        var keys = ["↑↓ select", "+/- vote", "0 clear", "/ search", "a add a title", "d remove", "s ask to skip", "i invite", "L leave", "q quit"]
        if model.hasHostControls { keys += ["| host:  n skip", "p play/pause", ", . seek ∓10 s", "l lock", "o settings"] }
        if withSyncKeys { keys.append("[ ] < > r c sync") }
        return lines + wrap(keys, width: width)
    }

    /// `items` joined by two spaces, on as many lines as `width` needs.
    static func wrap(_ items: [String], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for item in items {
            if line.isEmpty {
                line = item
            } else if visibleCount(line) + 2 + visibleCount(item) <= width {
                line += "  " + item
            } else {
                lines.append(line)
                line = item
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    static func nowPlayingLines(_ model: ScreenModel, width: Int) -> [String] {
        guard let now = model.snapshot.nowPlaying else {
            return [model.snapshot.skipping ? "Skipping…" : "Nothing playing", "", ""]
        }
        let track = now.item.track
        let state = switch now.state {
        case .preparing: "starting"
        case .playing: "playing"
        case .paused: "paused"
        }
        let head = "▶ \(track.name) — \(track.artist)"
        var lines = [spread(head, "\(state) · added by \(now.item.addedBy.displayName)", width: width)]
        let position = model.serverNowMs.map { now.position(at: Millis($0)) } ?? now.positionMs
        if let duration = track.durationMs, duration > 0 {
            let times = " \(clock(position)) / \(clock(duration))"
            let barWidth = max(10, width - times.count - 2)
            // Before the clock is synced the position is the server's, whatever it sent.
            let filled = Int((Double(min(max(position, 0), duration)) / Double(duration) * Double(barWidth)).rounded(.down))
            lines.append("[" + String(repeating: "█", count: filled) + String(repeating: "░", count: max(0, barWidth - filled)) + "]" + times)
        } else {
            lines.append(" \(clock(position))")
        }
        let requests = model.snapshot.skipRequests
        var skip = "Skip requests \(requests.count)/\(requests.needed)"
        if requests.mine { skip += " (you asked; s takes it back)" }
        if let next = model.snapshot.upNext { skip += " · next: \(next.item.track.name)" }
        lines.append(skip)
        return lines
    }

    static func queue(_ model: ScreenModel, width: Int) -> [String] {
        model.snapshot.queue.enumerated().map { index, entry in
            let marker = index == model.selection ? "›" : " "
            let vote = entry.myVote > 0 ? "▲" : entry.myVote < 0 ? "▼" : " "
            let score = String(format: "%+d", entry.item.score)
            var right = "\(entry.item.reason) · \(entry.item.addedBy.displayName)"
            if entry.pending { right += " · adding…" }
            if entry.voteInFlight { right += " · voting…" }
            let left = "\(marker) \(vote)\(score.padding(toLength: 4, withPad: " ", startingAt: 0)) \(entry.item.track.name) — \(entry.item.track.artist)"
            return spread(left, right, width: width)
        }
    }

    /// The last songs that played, newest first, each with how it ended.
    static func historyLine(_ history: [HistoryEntry], viewer: UserID?) -> String? {
        guard !history.isEmpty else { return nil }
        let entries = history.suffix(3).reversed().map { entry in
            "\(entry.item.track.name) (\(endedText(entry, viewer: viewer)))"
        }
        return "Played: " + entries.joined(separator: " · ")
    }

    /// How a song ended, in words: "played", "skipped by Ann", "skipped by vote".
    static func endedText(_ entry: HistoryEntry, viewer: UserID?) -> String {
        let who = entry.endedBy != nil && entry.endedBy == viewer ? "you" : entry.endedByName
        switch entry.outcome {
        case .played: return "played"
        case .skipped: return who.map { "skipped by \($0)" } ?? "skipped by vote"
        case .removed: return who.map { "removed by \($0)" } ?? "removed"
        }
    }

    static func membersLine(_ snapshot: StoreSnapshot, width: Int) -> String {
        let members = snapshot.members.map { member -> String in
            let role = member.role == .member ? "" : " (\(member.role.rawValue))"
            return "\(member.connected ? "●" : "○") \(member.displayName)\(role)"
        }
        return "Members: " + members.joined(separator: "  ")
    }

    static func settingsLines(_ settings: SessionSettings, choice: Int) -> [String] {
        var lines = ["Session settings   (↑↓ choose, ← → change, Esc close)", ""]
        for (index, row) in SettingsRow.allCases.enumerated() {
            lines.append("\(index == choice ? "›" : " ") \(row.label): \(row.value(settings))")
        }
        return lines
    }

    static func inviteLines(_ invite: ScreenModel.Invite, width: Int) -> [String] {
        var lines = ["Invite friends", "", "Join code:  \(invite.code)", "Link:       \(invite.link)"]
        if invite.linksOnlyHere {
            lines.append("            only this computer opens it: start with --server and an address others reach")
        }
        lines.append("")
        lines += invite.qrLines
        lines += ["", "Press any key to go to the session."]
        return lines
    }

    static func phaseText(_ phase: ConnectionPhase) -> String {
        switch phase {
        case .idle: "starting"
        case .connecting(let attempt): attempt > 1 ? "reconnecting (\(attempt))" : "connecting"
        case .connected: "connected"
        case .retrying(let attempt, let afterMs, _): "offline, retry \(attempt) in \(Int(afterMs / 1000 + 0.5)) s"
        case .failed(let error): "closed: \(error.message)"
        }
    }

    static func clock(_ ms: Int64) -> String {
        let seconds = max(0, ms / 1000)
        return "\(seconds / 60):" + String(format: "%02d", seconds % 60)
    }

    static func rule(_ width: Int) -> String { String(repeating: "─", count: width) }

    /// `left` and `right` on one line, `right` flush right, cut to `width`. Where they do not
    /// fit, `left` gives way first (`right` begins with a state: offline, paused, a score), but
    /// keeps half the line, or all it needs of it: `right` may end in a member's long name.
    static func spread(_ left: String, _ right: String, width: Int) -> String {
        let leftColumns = visibleCount(left)
        var right = right
        var rightColumns = visibleCount(right)
        if leftColumns + rightColumns + 1 <= width {
            return left + String(repeating: " ", count: width - leftColumns - rightColumns) + right
        }
        let rightRoom = width - 1 - min(leftColumns, width / 2)
        guard rightRoom >= 2 else { return cut(left, width) }
        if rightColumns > rightRoom {
            right = cut(right, rightRoom)
            rightColumns = visibleCount(right)
        }
        let shortened = cut(left, width - rightColumns - 1)
        return shortened + String(repeating: " ", count: max(1, width - visibleCount(shortened) - rightColumns)) + right
    }

    static func cut(_ text: String, _ width: Int) -> String {
        if visibleCount(text) <= width { return text }
        guard text.contains("\u{1B}") else { return TerminalWidth.prefix(text, columns: max(0, width - 1)) + "…" }
        // Colours kept whole (an escape takes no column, and a cut must not split one), and
        // ended after the cut so none runs on into the next line.
        var kept = ""
        var used = 0
        var inEscape = false
        for character in text {
            if inEscape {
                kept.append(character)
                if character == "m" { inEscape = false }
            } else if character == "\u{1B}" {
                kept.append(character)
                inEscape = true
            } else {
                let columns = TerminalWidth.of(character)
                if used + columns > width - 1 { break }
                kept.append(character)
                used += columns
            }
        }
        return kept + "…" + TerminalText.Colour.reset.rawValue
    }

    /// Columns a line takes on screen: colour escapes take none, wide characters two.
    static func visibleCount(_ text: String) -> Int {
        TerminalWidth.of(text.contains("\u{1B}") ? plainText(text) : text)
    }

    /// `text` without its colour escapes (`ESC [ … m`).
    static func plainText(_ text: String) -> String {
        var result = ""
        var inEscape = false
        for character in text {
            if inEscape {
                if character == "m" { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The lines that fit: the first ones, and always the last, which says how to go on (the
    /// invite's "Press any key").
    static func fit(_ lines: [String], rows: Int, width: Int) -> [String] {
        let kept = lines.count <= max(1, rows) ? lines : Array(lines.prefix(max(0, rows - 1))) + [lines[lines.count - 1]]
        return kept.map { cut($0, width) }
    }
}

import Foundation
