import Testing
import JamCore
import JamProtocol

struct SettingsTests {
    @Test func updateAnnouncesTheNewSettings() throws {
        var jam = try Jam()
        let outcome = try jam.apply(.updateSettings(SettingsPatch(locked: true, maxQueuedPerMember: 3)), by: host)
        let expected = SessionSettings(locked: true, maxQueuedPerMember: 3)
        #expect(outcome.events.map(\.event) == [.sessionUpdated(SessionUpdated(settings: expected, name: "Test jam", joinCode: "ABC234"))])
        #expect(jam.state.settings == expected)
        #expect(jam.state.view(for: alice).session.settings == expected)
    }

    @Test func outOfRangeSettingsAreRefused() throws {
        var jam = try Jam()
        for patch in [SettingsPatch(skipThreshold: 0), SettingsPatch(skipThreshold: 1.01), SettingsPatch(maxMembers: 0),
                      SettingsPatch(maxMembers: SessionSettings.memberLimit + 1), SettingsPatch(maxQueuedPerMember: 0),
                      SettingsPatch(locked: true, maxQueuedPerMember: SessionSettings.queueLimit + 1)] {
            jam.reject(.updateSettings(patch), by: host, .invalidField)
        }
    }

    @Test func maxMembersCannotDropBelowTheMembersPresent() throws {
        var jam = try Jam(members: [alice, bob])
        jam.reject(.updateSettings(SettingsPatch(maxMembers: 2)), by: host, .conflict)
        try jam.apply(.updateSettings(SettingsPatch(maxMembers: 3)), by: host)
        jam.reject(.join(displayName: "Carol"), by: carol, .sessionFull)
    }

    @Test func lockedSessionOnlyHostsAdd() throws {
        var jam = try Jam(members: [alice, bob])
        try jam.apply(.setRole(userId: bob, role: .cohost), by: host)
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.updateSettings(SettingsPatch(locked: true)), by: host)
        jam.reject(.add(track: track(3), nonce: "nonce-3", itemId: itemID(3)), by: alice, .locked)
        try jam.add(4, by: bob)
        try jam.add(5, by: host)
        // Voting and removing one's own item still work while locked.
        try jam.vote(4, 1, by: alice)
        try jam.apply(.remove(itemId: itemID(2)), by: alice)
        // A retry of an add that went through before the lock still answers with its item.
        let retry = try jam.apply(.add(track: track(2), nonce: "nonce-2", itemId: itemID(2)), by: alice)
        #expect(retry.itemId == itemID(2))
        #expect(retry.events.isEmpty)
        try jam.apply(.updateSettings(SettingsPatch(locked: false)), by: host)
        try jam.add(3, by: alice)
        #expect(Set(jam.state.queue.map(\.id)) == Set(items(3, 4, 5)))
    }

    @Test func maxQueuedPerMemberLimitsWaitingItems() throws {
        var jam = try Jam(settings: SessionSettings(maxQueuedPerMember: 2))
        try jam.add(1, by: alice)  // plays at once: not waiting
        try jam.add(2, by: alice)
        try jam.add(3, by: alice)
        jam.reject(.add(track: track(4), nonce: "nonce-4", itemId: itemID(4)), by: alice, .queueLimit)
        try jam.add(5, by: bob)
        try jam.apply(.remove(itemId: itemID(2)), by: alice)
        try jam.add(4, by: alice)
        #expect(jam.state.queue.filter { $0.addedBy == alice }.count == 2)
    }

    @Test func hostsAreNotBoundByTheQueueLimit() throws {
        var jam = try Jam(settings: SessionSettings(maxQueuedPerMember: 1))
        try jam.apply(.setRole(userId: bob, role: .cohost), by: host)
        for n in 1...4 { try jam.add(n, by: host) }
        for n in 5...7 { try jam.add(n, by: bob) }
        #expect(jam.state.queue.count == 6)
    }

    @Test func allowDuplicatesLetsTheSameTrackQueueTwice() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.apply(.add(track: track(2), nonce: "a", itemId: itemID(2)), by: alice)
        jam.reject(.add(track: track(2), nonce: "b", itemId: itemID(3)), by: bob, .duplicate)
        try jam.apply(.updateSettings(SettingsPatch(allowDuplicates: true)), by: host)
        try jam.apply(.add(track: track(2), nonce: "b", itemId: itemID(3)), by: bob)
        try jam.apply(.add(track: track(1), nonce: "c", itemId: itemID(4)), by: bob)
        #expect(jam.state.queue.map(\.track) == [track(2), track(2), track(1)])
    }

    @Test func switchingOrderingRebroadcastsTheQueue() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: alice)
        try jam.add(4, by: bob)
        try jam.vote(3, 1, by: bob)
        #expect(jam.order == items(3, 2, 4))
        let outcome = try jam.apply(.updateSettings(SettingsPatch(ordering: .fair)), by: host)
        #expect(outcome.events.types == [.sessionUpdated, .queueUpdate])
        #expect(outcome.events.last?.event.queueUpdate?.queue.map(\.id) == items(3, 4, 2))
        #expect(outcome.events.last?.event.queueUpdate?.queue.map(\.reason) == ["Alice's turn", "Bob's turn", "Alice's turn, round 2"])
    }

    @Test func settingsThatKeepTheQueueAsShownDoNotRebroadcastIt() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        #expect(try jam.apply(.updateSettings(SettingsPatch(fallback: true)), by: host).events.types == [.sessionUpdated])
        #expect(try jam.apply(.updateSettings(SettingsPatch(skipThreshold: 0.75)), by: host).events.types.contains(.queueUpdate) == false)
    }

    @Test func switchingTheOrderingSendsTheNewReasonsWhereTheOrderStays() throws {
        var jam = try Jam()
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.add(3, by: bob)
        // Both orderings agree on the order here; only the reasons change.
        let toFair = try jam.apply(.updateSettings(SettingsPatch(ordering: .fair)), by: host)
        #expect(toFair.events.types == [.sessionUpdated, .queueUpdate])
        #expect(toFair.events.last?.event.queueUpdate?.queue.map(\.reason) == ["Alice's turn", "Bob's turn"])
        let back = try jam.apply(.updateSettings(SettingsPatch(ordering: .votes)), by: host)
        #expect(back.events.last?.event.queueUpdate?.queue.map(\.reason) == ["no votes", "no votes"])
        #expect(try jam.apply(.updateSettings(SettingsPatch(ordering: .votes)), by: host).events.types == [.sessionUpdated])
    }

    @Test func loweringTheSkipThresholdCanSkipAtOnce() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.startPlaying(1)
        try jam.add(2, by: alice)
        try jam.apply(.requestSkip, by: alice)
        try jam.apply(.requestSkip, by: bob)
        #expect(jam.state.current?.item.id == itemID(1))
        // 4 connected: 0.5 needs 3; 0.25 needs 2, which two requests reach.
        let outcome = try jam.apply(.updateSettings(SettingsPatch(skipThreshold: 0.25)), by: host)
        #expect(outcome.events.types == [.sessionUpdated, .skipRequests, .playPrepare, .skipRequests, .queueUpdate])
        #expect(outcome.events[1].event == .skipRequests(SkipRequestsUpdate(count: 2, needed: 2)))
        #expect(jam.state.current?.item.id == itemID(2))
        #expect(jam.state.history.last?.outcome == .skipped)
    }

    @Test func aNewSkipThresholdTellsMembersHowManyRequestsItTakes() throws {
        var jam = try Jam(members: [alice, bob, carol])
        try jam.startPlaying(1)
        try jam.apply(.requestSkip, by: alice)
        // 4 connected: 0.5 needs 3; 0.75 needs 4.
        let outcome = try jam.apply(.updateSettings(SettingsPatch(skipThreshold: 0.75)), by: host)
        #expect(outcome.events.types == [.sessionUpdated, .skipRequests])
        #expect(outcome.events[1].event == .skipRequests(SkipRequestsUpdate(count: 1, needed: 4)))
        // Nothing playing: nobody is shown a count, so nothing is sent.
        var idle = try Jam(members: [alice, bob, carol])
        let quiet = try idle.apply(.updateSettings(SettingsPatch(skipThreshold: 0.75)), by: host)
        #expect(quiet.events.types == [.sessionUpdated])
    }
}
