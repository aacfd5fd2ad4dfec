import Foundation
import JamProtocol
import Testing

@testable import JamClient
@testable import jam

/// The live screen as lines (`ScreenRenderer.render`, a pure function) and the songs typed into
/// its add prompt, without a terminal.
@Suite struct TerminalScreenTests {
    static let me: UserID = "00000000-0000-0000-0000-0000000000aa"

    /// A screen of `rows` × `columns` for a member (or the host) with `queued` songs.
    static func model(rows: Int = 24, columns: Int = 80, host: Bool = false, queued: Int = 0) -> ScreenModel {
        var model = ScreenModel()
        model.me = me
        model.rows = rows
        model.columns = columns
        let member = Member(userId: me, displayName: "Gil", role: host ? .host : .member, connected: true)
        model.snapshot.members = [member]
        model.snapshot.role = host ? .host : .member
        model.snapshot.queue = (0..<queued).map { n in
            let track = Track(id: "song-\(n)", name: "Song \(n)", artist: "Band", durationMs: 180_000, source: .library)
            return StoreItem(item: QueueItem(id: ItemID("item-\(n)"), track: track, addedBy: member, addedAt: 0, score: 0, reason: ""), myVote: 0, pending: false, voteInFlight: false)
        }
        return model
    }

    @Test func everyKeyShowsOnAnEightyColumnTerminalForMembersAndHosts() {
        for host in [false, true] {
            let lines = ScreenRenderer.render(Self.model(host: host))
            let text = lines.joined(separator: "\n")
            for key in ["↑↓ select", "d remove", "i invite", "L leave", "q quit"] { #expect(text.contains(key), "\(key) missing (host: \(host)):\n\(text)") }
            if host {
                for key in ["n skip", "p play/pause", "l lock", "o settings"] { #expect(text.contains(key), "\(key) missing:\n\(text)") }
            }
            #expect(lines.allSatisfy { ScreenRenderer.visibleCount($0) <= 80 && !$0.hasSuffix("…") }, "a line was cut:\n\(text)")
        }
    }

    @Test func theConnectionAndWhetherASongIsPausedShowBesideLongNamesOnANarrowScreen() {
        var model = Self.model(columns: 40)
        model.snapshot.session = SessionInfo(
            id: "00000000-0000-0000-0000-000000000001", joinCode: "X2G3TG", name: String(repeating: "Birthday party ", count: 4),
            hostId: Self.me, hostDisplayName: "Gil", settings: SessionSettings(), createdAt: 0)
        model.snapshot.phase = .retrying(attempt: 2, afterMs: 3_000, reason: "connection lost")
        let track = Track(id: "long", name: "A song whose title goes on and on and on", artist: "Band", durationMs: 180_000, source: .library)
        let item = QueueItem(id: "item-long", track: track, addedBy: model.snapshot.members[0], addedAt: 0, score: 0, reason: "")
        model.snapshot.nowPlaying = NowPlaying(item: item, epoch: 1, state: .paused, positionMs: 1_000, anchorMs: 0)
        let lines = ScreenRenderer.render(model)
        #expect(lines[0].contains("offline"), "\(lines[0])")
        #expect(lines.contains { $0.contains("▶") && $0.contains("paused") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.allSatisfy { ScreenRenderer.visibleCount($0) <= 40 }, "\(lines.joined(separator: "\n"))")
    }

    @Test func aSongAddedBySomebodyWithALongNameKeepsItsTitle() {
        var model = Self.model(queued: 1)
        let long = Member(userId: "00000000-0000-0000-0000-0000000000dd", displayName: String(repeating: "Maximiliane ", count: 5), role: .member, connected: true)
        model.snapshot.queue[0].item.addedBy = long
        model.snapshot.queue[0].item.track.name = "Harvest Moon"
        for columns in [80, 40] {
            model.columns = columns
            let lines = ScreenRenderer.render(model)
            let row = lines.first { $0.hasPrefix("›") }
            #expect(row?.contains("Harvest") == true, "\(columns) columns: \(lines.joined(separator: "\n"))")
            #expect(lines.allSatisfy { ScreenRenderer.visibleCount($0) <= columns })
        }
    }

    @Test func aFlagTakesTwoColumnsSoANameWithFlagsDoesNotWrap() {
        #expect(TerminalWidth.of(Character("🇯🇵")) == 2)
        var model = Self.model()
        model.snapshot.members.append(Member(userId: "00000000-0000-0000-0000-0000000000bb", displayName: "Kenji " + String(repeating: "🇯🇵", count: 8), role: .member, connected: true))
        model.snapshot.members.append(Member(userId: "00000000-0000-0000-0000-0000000000cc", displayName: "Ana " + String(repeating: "🇧🇷", count: 8), role: .member, connected: true))
        let lines = ScreenRenderer.render(model)
        #expect(lines.allSatisfy { ScreenRenderer.visibleCount($0) <= 80 }, "\(lines.joined(separator: "\n"))")
    }

    @Test func theInviteKeepsItsWayOnOnAShortScreen() {
        var model = Self.model(rows: 24)
        model.mode = .invite
        model.invite = ScreenModel.Invite(code: "ABC123", link: "http://127.0.0.1:8080/j/ABC123", qrLines: Array(repeating: String(repeating: "█", count: 29), count: 20))
        let lines = ScreenRenderer.render(model)
        #expect(lines.count <= 24)
        #expect(lines.last?.contains("Press any key") == true, "\(lines.joined(separator: "\n"))")
    }

    @Test func aScreenNarrowerThanThirtyColumnsKeepsEveryLineWithinIt() {
        for host in [false, true] {
            let lines = ScreenRenderer.render(Self.model(columns: 25, host: host, queued: 2))
            #expect(lines.allSatisfy { ScreenRenderer.visibleCount($0) <= 25 }, "\(lines.joined(separator: "\n"))")
        }
    }

    @Test func everySearchResultThatEnterCanAddShowsBesideALongQueue() {
        var model = Self.model(queued: 20)
        let results = (0..<8).map { Track(id: "found-\($0)", name: "Found \($0)", artist: "Band", durationMs: 200_000, source: .library) }
        model.mode = .searching(query: "found", results: results, choice: ScreenRenderer.searchResultsShown - 1)
        let lines = ScreenRenderer.render(model)
        #expect(lines.count <= model.rows)
        let text = lines.joined(separator: "\n")
        for n in 0..<ScreenRenderer.searchResultsShown { #expect(text.contains("Found \(n) — Band"), "result \(n) hidden:\n\(text)") }
        #expect(lines.contains { $0.hasPrefix("› Found \(ScreenRenderer.searchResultsShown - 1)") }, "the chosen result is not marked:\n\(text)")
        #expect(text.contains("q quit"), "the keys went:\n\(text)")
    }

    @Test func aHostsSearchBesideALongSyncColumnOnAShortTerminalKeepsItsResultsAndKeys() {
        for devices in [1, 3, 8] {
            var model = Self.model(rows: 24, host: true, queued: 20)
            model.snapshot.history = []
            model.syncBoard = SyncStatusUpdate(
                devices: (0..<devices).map { n in
                    DeviceSyncStatus(
                        userId: Self.me, deviceId: "device-\(n)", clockErrorMs: 1, playbackErrorMs: 2, clockDriftPpm: 3, outputLatencyMs: 10,
                        delayMs: 0, playing: true, ageMs: 500, grade: .good)
                })
            let results = (0..<8).map { Track(id: "found-\($0)", name: "Found \($0)", artist: "Band", durationMs: 200_000, source: .library) }
            model.mode = .searching(query: "found", results: results, choice: 0)
            let lines = ScreenRenderer.render(model)
            let text = lines.joined(separator: "\n")
            #expect(lines.count <= 24)
            for n in 0..<ScreenRenderer.searchResultsShown { #expect(text.contains("Found \(n) — Band"), "\(devices) devices: result \(n) hidden:\n\(text)") }
            for key in ["q quit", "o settings", "r c sync"] { #expect(text.contains(key), "\(devices) devices: \(key) hidden:\n\(text)") }
            // The host's keys begin on the line that names them, never after a lone "| host:".
            #expect(!lines.contains { $0.hasSuffix("| host:") }, "\(text)")
        }
    }

    @Test func aWebDevicesDelayAndGradeColourShowOnAnEightyColumnHostScreen() throws {
        var model = Self.model(host: true)
        model.syncBoard = SyncStatusUpdate(devices: [
            DeviceSyncStatus(
                userId: Self.me, deviceId: "k3J9x2LmQ8vT4nZa", clockErrorMs: 0.8, playbackErrorMs: 1.5, clockDriftPpm: 3, outputLatencyMs: 40,
                delayMs: 10, playing: true, ageMs: 500, grade: .good)
        ])
        let lines = ScreenRenderer.render(model)
        let row = try #require(lines.first { $0.contains("k3J9x2LmQ8vT4nZa") }, "\(lines.joined(separator: "\n"))")
        #expect(row.contains("delay +10 ms"), "\(row)")
        #expect(row.contains(TerminalText.Colour.green.rawValue + "●"), "the grade's colour was cut: \(row)")
        #expect(ScreenRenderer.visibleCount(row) <= 80, "\(row)")
    }

    /// A host screen whose sync board lists one web device with `delayMs`.
    static func board(delayMs: Double?) -> SyncStatusUpdate {
        SyncStatusUpdate(devices: [
            DeviceSyncStatus(
                userId: me, deviceId: "phone", clockErrorMs: 0.8, playbackErrorMs: 1.5, clockDriftPpm: 3, outputLatencyMs: 40,
                delayMs: delayMs, playing: true, ageMs: 500, grade: .good)
        ])
    }

    @Test func quickDelayPressesStepFromTheLastSentUntilTheBoardShowsIt() throws {
        var model = Self.model(host: true)
        model.take(Self.board(delayMs: 10))
        let device = try #require(model.selectedDevice)
        #expect(model.stepDelay(of: device, by: 5) == 15)
        #expect(model.stepDelay(of: device, by: 5) == 20)
        // The board still shows the value from before, then the first step: both are behind.
        model.take(Self.board(delayMs: 10))
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: 5) == 25)
        model.take(Self.board(delayMs: 15))
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: -5) == 20)
        // Once it shows the last one sent, a press steps from the board.
        model.take(Self.board(delayMs: 20))
        #expect(model.sentDelays.isEmpty)
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: 5) == 25)
    }

    @Test func aDelayAnotherHostSetIsWhatTheNextPressStepsFrom() throws {
        var model = Self.model(host: true)
        model.take(Self.board(delayMs: 10))
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: 5) == 15)
        // Another host set 40 ms after this press: the board never shows 15.
        model.take(Self.board(delayMs: 40))
        #expect(model.sentDelays.isEmpty)
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: 5) == 45)
    }

    @Test func aSentDelayIsForgottenWhenItsDeviceLeavesTheBoard() throws {
        var model = Self.model(host: true)
        model.take(Self.board(delayMs: nil))
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: -5) == -5)
        model.take(SyncStatusUpdate(devices: []))
        #expect(model.sentDelays.isEmpty)
        #expect(model.selectedDevice == nil)
        // Back with no delay set: a press steps from zero, not from the delay sent before.
        model.take(Self.board(delayMs: nil))
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: 5) == 5)
    }

    @Test func aDelayPressAtTheLimitSendsNothing() throws {
        var model = Self.model(host: true)
        model.take(Self.board(delayMs: Validate.maxDeviceDelayMs))
        #expect(model.stepDelay(of: try #require(model.selectedDevice), by: 5) == nil)
        #expect(model.sentDelays.isEmpty)
    }

    @Test func aNewRefusalShowsOverAMessageFromBeforeItAndOnlyOnce() {
        var model = Self.model(host: true)
        model.message = "Asked the device to re-sync."
        var refused = model.snapshot
        refused.lastRejection = Rejection(id: 1, action: "re-sync", code: .notFound, message: "no such device")
        model.take(refused)
        #expect(ScreenRenderer.render(model).contains("✗ re-sync refused: no such device"))
        // A message after it is newer than the same refusal coming again.
        model.message = "Asked the device to re-sync."
        model.take(refused)
        #expect(ScreenRenderer.render(model).contains("Asked the device to re-sync."))
    }

    @Test func aTypedSongIsTheSameSongWhateverItsCaseOrSpacing() throws {
        let first = try #require(TypedTrack.track(from: "Harvest Moon - Neil Young"))
        let again = try #require(TypedTrack.track(from: "  harvest moon  -  NEIL YOUNG "))
        #expect(first.id == again.id, "the server could not tell the second add is the same song")
        #expect(first.name == "Harvest Moon" && first.artist == "Neil Young")
        #expect(try #require(TypedTrack.track(from: "Harvest Moon - Other Band")).id != first.id)
        #expect(try #require(TypedTrack.track(from: "Harvest Moon")).artist == "Unknown artist")
        // An accent pasted as a letter and a combining mark is the letter typed.
        #expect(TypedTrack.track(from: "Cafe\u{301} - Band")?.id == TypedTrack.track(from: "Caf\u{E9} - Band")?.id)
        #expect(TypedTrack.track(from: " - Band") == nil)
        #expect(TypedTrack.track(from: "   ") == nil)
        #expect(first.id.count < 64)
    }
}
