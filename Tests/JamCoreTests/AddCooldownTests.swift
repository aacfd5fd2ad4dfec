import Foundation
import JamCore
import JamProtocol
import Testing

/// One add per member every so often (`addCooldownSeconds`), hosts and co-hosts aside.
@Suite struct AddCooldownTests {
    func jam(cooldown: Int = 120) throws -> Jam {
        try Jam(members: [alice, bob], settings: SessionSettings(addCooldownSeconds: cooldown))
    }

    @Test func aSecondAddWithinTheCooldownIsRefusedWithTheWait() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        let before = jam.state
        do throws(JamError) {
            _ = try jam.add(2, by: alice)
            Issue.record("the second add went through")
        } catch {
            #expect(error.code == .rateLimited)
            #expect(error.message == "you can add again in 2:00 (one add every 2:00)")
            #expect(error.retryAfterMs == 120_000, "REST sends it as Retry-After, the socket as retryAfterMs")
        }
        #expect(jam.state == before)
        _ = jam.wait(119_000)
        do throws(JamError) {
            _ = try jam.add(2, by: alice)
            Issue.record("the add one second early went through")
        } catch {
            #expect(error.message.hasPrefix("you can add again in 0:01"))
        }
        _ = jam.wait(1000)
        try jam.add(2, by: alice)
        #expect(jam.order.contains(itemID(2)))
    }

    @Test func leavingAndJoiningAgainKeepsTheCooldownRunning() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        let addedAt = jam.now
        _ = jam.wait(30_000)
        try jam.apply(.leave, by: alice)
        let back = try jam.apply(.join(displayName: "Alice"), by: alice)
        #expect(back.events.first?.event.memberJoined?.lastAddedAt == addedAt, "clients count down from the first add")
        do throws(JamError) {
            _ = try jam.add(2, by: alice)
            Issue.record("an add after leaving and joining again went through")
        } catch {
            #expect(error.message.hasPrefix("you can add again in 1:30"))
        }
        #expect(jam.state.departedLastAdds == nil, "nothing is kept once the member is back")
        // Once it has run out, nothing is kept for a member who leaves: they join afresh.
        _ = jam.wait(90_000)
        try jam.apply(.leave, by: alice)
        #expect(jam.state.departedLastAdds == nil)
        try jam.apply(.join(displayName: "Alice"), by: alice)
        try jam.add(2, by: alice)
    }

    @Test func turningTheCooldownOffForgetsTheLastAddsOfMembersWhoLeft() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        try jam.apply(.leave, by: alice)
        #expect(jam.state.departedLastAdds?[alice] == jam.now)
        try jam.apply(.updateSettings(SettingsPatch(addCooldownSeconds: 0)), by: host)
        try jam.apply(.updateSettings(SettingsPatch(addCooldownSeconds: 120)), by: host)
        try jam.apply(.join(displayName: "Alice"), by: alice)
        try jam.add(2, by: alice)
        #expect(jam.order.contains(itemID(2)))
    }

    @Test func theCooldownIsEachMembersOwn() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        try jam.add(2, by: bob)
        #expect(jam.order.contains(itemID(2)) || jam.state.current?.item.id == itemID(2))
    }

    @Test func hostsAddWithoutWaiting() throws {
        var jam = try jam()
        try jam.add(1, by: host)
        try jam.add(2, by: host)
        try jam.add(3, by: host)
        #expect(jam.order == items(2, 3))
    }

    @Test func anAddTellsEverybodyWhenTheMemberAddedSoClientsCountDown() throws {
        var jam = try jam()
        let outcome = try jam.add(1, by: alice)
        let updated = outcome.events.compactMap { envelope -> Member? in
            if case .memberUpdated(let member) = envelope.event { return member }
            return nil
        }
        #expect(updated.map(\.userId) == [alice])
        #expect(updated.first?.lastAddedAt == jam.now)
        let view = try #require(jam.state.view(for: bob).members.first { $0.userId == alice })
        #expect(jam.state.settings.nextAddAt(for: view) == jam.now + 120_000)
    }

    @Test func withoutACooldownAddsSendNoMemberUpdate() throws {
        var jam = try jam(cooldown: 0)
        let outcome = try jam.add(1, by: alice)
        #expect(!outcome.events.types.contains(.memberUpdated))
        try jam.add(2, by: alice)
    }

    @Test func turningTheCooldownOnStartsEverybodyAfresh() throws {
        var jam = try jam(cooldown: 0)
        try jam.add(1, by: alice)
        let outcome = try jam.apply(.updateSettings(SettingsPatch(addCooldownSeconds: 300)), by: host)
        #expect(outcome.events.types == [.sessionUpdated])
        try jam.add(2, by: alice)
        jam.reject(.add(track: track(3), nonce: "n3", itemId: itemID(3)), by: alice, .rateLimited)
    }

    @Test func turningTheCooldownOffAndOnAgainStartsEverybodyAfresh() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        let off = try jam.apply(.updateSettings(SettingsPatch(addCooldownSeconds: 0)), by: host)
        // Members' views drop the last add, so no client counts down from it later.
        #expect(off.events.types == [.sessionUpdated, .memberUpdated])
        #expect(jam.state.member(alice)?.lastAddedAt == nil)
        _ = jam.wait(10_000)
        try jam.apply(.updateSettings(SettingsPatch(addCooldownSeconds: 120)), by: host)
        try jam.add(2, by: alice)
        jam.reject(.add(track: track(3), nonce: "n3", itemId: itemID(3)), by: alice, .rateLimited)
    }

    @Test func theQueuesItemsDoNotCarryTheAddersLastAdd() throws {
        var jam = try jam()
        try jam.add(1, by: alice)
        #expect(jam.state.current.map { jam.state.itemView($0.item, reason: "") }?.addedBy.lastAddedAt == nil)
    }

    @Test func theCooldownIsBetweenNoneAndAnHour() throws {
        var jam = try jam(cooldown: 0)
        jam.reject(.updateSettings(SettingsPatch(addCooldownSeconds: -1)), by: host, .invalidField)
        jam.reject(.updateSettings(SettingsPatch(addCooldownSeconds: 3601)), by: host, .invalidField)
        try jam.apply(.updateSettings(SettingsPatch(addCooldownSeconds: 3600)), by: host)
        #expect(jam.state.settings.addCooldownSeconds == 3600)
    }

    @Test func settingsStoredBeforeTheCooldownReadAsNone() throws {
        let old = #"{"allowDuplicates":false,"fallback":false,"locked":false,"maxMembers":50,"maxQueuedPerMember":20,"ordering":"votes","skipThreshold":0.5}"#
        let settings = try JSONDecoder().decode(SessionSettings.self, from: Data(old.utf8))
        #expect(settings == SessionSettings())
    }
}
