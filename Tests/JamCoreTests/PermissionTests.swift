import Testing
import JamCore
import JamProtocol

/// Host controls are open to the host and co-hosts; host-only actions to the host alone.
struct PermissionTests {
    enum HostControl: String, CaseIterable, Sendable {
        case skip, play, pause, resume, seek, updateSettings
    }

    enum HostOnly: String, CaseIterable, Sendable {
        case setRole, kick, setJoinCode, end
    }

    /// Alice is a plain member, Bob a co-host; track 1 plays, track 2 waits; the command fits the state.
    func scenario(_ control: HostControl) throws -> (Jam, Command) {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.apply(.setRole(userId: bob, role: .cohost), by: host)
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        jam.wait(10_000)
        switch control {
        case .skip: return (jam, .skip)
        case .pause: return (jam, .pause)
        case .seek: return (jam, .seek(positionMs: 60_000))
        case .updateSettings: return (jam, .updateSettings(SettingsPatch(locked: true)))
        case .play, .resume:
            try jam.apply(.pause, by: host)
            return (jam, control == .play ? .play : .resume)
        }
    }

    func command(_ action: HostOnly) -> Command {
        switch action {
        case .setRole: .setRole(userId: carol, role: .cohost)
        case .kick: .kick(userId: carol)
        case .setJoinCode: .setJoinCode("NEWCDE")
        case .end: .end
        }
    }

    @Test(arguments: HostControl.allCases)
    func memberMayNotUseHostControls(_ control: HostControl) throws {
        var (jam, command) = try scenario(control)
        jam.reject(command, by: alice, .forbidden)
    }

    @Test(arguments: HostControl.allCases)
    func cohostMayUseHostControls(_ control: HostControl) throws {
        var (jam, command) = try scenario(control)
        let outcome = try jam.apply(command, by: bob)
        #expect(!outcome.events.isEmpty)
    }

    @Test(arguments: HostControl.allCases)
    func hostMayUseHostControls(_ control: HostControl) throws {
        var (jam, command) = try scenario(control)
        let outcome = try jam.apply(command, by: host)
        #expect(!outcome.events.isEmpty)
    }

    @Test(arguments: HostControl.allCases)
    func strangerIsNotAMember(_ control: HostControl) throws {
        var (jam, command) = try scenario(control)
        jam.reject(command, by: stranger, .notMember)
    }

    @Test(arguments: HostOnly.allCases)
    func onlyTheHostMayDoHostOnlyActions(_ action: HostOnly) throws {
        var (jam, _) = try scenario(.skip)
        jam.reject(command(action), by: alice, .forbidden)
        jam.reject(command(action), by: bob, .forbidden)
        jam.reject(command(action), by: stranger, .notMember)
        let outcome = try jam.apply(command(action), by: host)
        #expect(!outcome.events.isEmpty)
    }

    @Test func everyMemberMayAddVoteAndRequestSkips() throws {
        var (jam, _) = try scenario(.skip)
        try jam.add(3, by: carol)
        try jam.vote(2, 1, by: carol)
        try jam.apply(.requestSkip, by: carol)
        try jam.apply(.syncReport(SyncReport(epoch: 1, offsetMs: 0, errorMs: 5, driftMs: 0)), by: carol)
        try jam.apply(.ready(epoch: 1), by: carol)
        try jam.apply(.remove(itemId: itemID(3)), by: carol)
        #expect(jam.state.queue.map(\.id) == items(2))
        #expect(jam.state.skipRequests == [carol])
    }

    @Test func promotedMemberGainsHostControlsAndDemotedLosesThem() throws {
        var (jam, _) = try scenario(.pause)
        jam.reject(.pause, by: alice, .forbidden)
        try jam.apply(.setRole(userId: alice, role: .cohost), by: host)
        try jam.apply(.pause, by: alice)
        try jam.apply(.setRole(userId: alice, role: .member), by: host)
        jam.reject(.resume, by: alice, .forbidden)
    }
}
