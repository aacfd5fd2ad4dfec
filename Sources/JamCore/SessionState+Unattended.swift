import JamProtocol

/// A session nobody attends: playback pauses after `Timing.unattendedPauseMs` without a
/// connected member (so it stops advancing through the queue and fallback, and stops
/// writing), and the session ends after `Timing.abandonAfterMs`. A command that arrives
/// without a socket (a REST add) counts as attending too.
extension SessionState {
    /// Starts or stops the unattended clock after a command: stopped while a member is
    /// connected, restarted by any command when none is.
    mutating func noteAttendance(at now: Millis) {
        unattendedSince = connectedCount > 0 ? nil : now
    }

    /// Pauses or ends an unattended session whose time has come; true once it has ended.
    mutating func applyUnattended(at now: Millis, into outcome: inout Outcome) -> Bool {
        guard let since = unattendedSince, connectedCount == 0 else { return false }
        if let abandon = timing.abandonAfterMs, now >= since + abandon {
            end(reason: "nobody was connected for \(Self.spokenDuration(abandon))", at: now, into: &outcome)
            return true
        }
        if let pauseAfter = timing.unattendedPauseMs, now >= since + pauseAfter, rules.startMode == .scheduled,
            let current, current.state != .paused
        {
            // Where the timeline stood at the pause's own instant, however late this runs
            // (after a restart, say), so replaying the log gives the same position. A host
            // resumes when people are back.
            hold(positionAt: since + pauseAfter, at: now, into: &outcome)
        }
        return false
    }

    /// The next instant `applyUnattended` has something to do.
    func unattendedDeadline() -> Millis? {
        guard let since = unattendedSince, connectedCount == 0 else { return nil }
        var deadline: Millis?
        if let abandon = timing.abandonAfterMs { deadline = since + abandon }
        if let pauseAfter = timing.unattendedPauseMs, rules.startMode == .scheduled, let current, current.state != .paused {
            deadline = min(deadline ?? .max, since + pauseAfter)
        }
        return deadline
    }

    /// "90 minutes", "24 hours": how long, in words a member reads in the end notice.
    public static func spokenDuration(_ ms: Int64) -> String {
        let minutes = ms / 60_000
        if minutes >= 120, minutes % 60 == 0 { return "\(minutes / 60) hours" }
        if minutes >= 1 { return minutes == 1 ? "1 minute" : "\(minutes) minutes" }
        return "\(ms / 1000) seconds"
    }
}
