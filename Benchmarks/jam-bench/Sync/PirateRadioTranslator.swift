import JamPirateRadioWire
import Foundation
import JamProtocol

/// Turns PirateRadio frames into what JamClient's `ClockSync` and `SyncEngine` read, so the
/// same client code plays along with a PirateRadio server.
///
/// - `pong {clientSendTime, serverTime}` becomes a four-timestamp sample with both server
///   stamps at `serverTime`: the protocol gives one whole-millisecond server instant.
/// - A relayed `playPrepare {trackId, track}` loads the track (start not yet known); the
///   relayed `playCommit {positionMs, ntpTimestamp}` starts it at that server instant.
/// - A `stateSync` naming a playing track of a new epoch (skip, auto-advance, a socket that
///   just joined) starts it where `positionMs` at `positionTimestamp` puts it; one that is not
///   playing stops the engine.
struct PirateRadioTranslator {
    /// What a frame means to the client.
    enum Output: Sendable {
        case pong(Pong)
        case envelope(ServerEnvelope)
    }

    /// A frame's envelope fields. PirateRadio's server sends `pong`, `driftReport` and a new
    /// DJ's `stateSync` without some of them.
    private struct Header: Decodable {
        var type: String
        var epoch: Int64?
        var seq: Int64?
        var timestamp: Int64?
    }

    /// A frame's place: its own fields, or the last frame's where it has none.
    private struct Stamp {
        var epoch: Int64 = 0
        var seq: Int64 = 0
        var timestamp: Int64 = 0
    }

    /// A frame's data.
    private struct Body<T: Decodable>: Decodable {
        var data: T
    }

    private var last = Stamp()
    /// The epoch whose start the engine was last given.
    private var startedEpoch: Int64 = -1
    private var playingEpoch: Int64?
    private let member = Member(userId: JamID("pirate-radio"), displayName: "PirateRadio", role: .member, connected: true)

    /// A frame that does not decode.
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    /// What `text` means; empty for frames the client does not act on.
    mutating func translate(_ text: String) throws -> [Output] {
        let bytes = Data(text.utf8)
        let decoder = JSONDecoder()
        let decoded: Header
        do {
            decoded = try decoder.decode(Header.self, from: bytes)
        } catch {
            throw Unreadable(description: "not a PirateRadio envelope: \(text.prefix(200))")
        }
        let header = Stamp(epoch: decoded.epoch ?? last.epoch, seq: decoded.seq ?? last.seq, timestamp: decoded.timestamp ?? last.timestamp)
        last = header
        /// The frame's data as `T`.
        func data<T: Decodable>(_: T.Type) throws -> T {
            do {
                return try decoder.decode(Body<T>.self, from: bytes).data
            } catch {
                throw Unreadable(description: "\(decoded.type) data is not \(T.self): \(text.prefix(200))")
            }
        }
        // A type PirateRadio's server does not send means nothing to the client.
        guard let type = PirateRadio.ServerType(rawValue: decoded.type) else { return [] }
        switch type {
        case .pong:
            let pong = try data(PirateRadio.Pong.self)
            let server = Double(pong.serverTime)
            return [.pong(Pong(clientSendTime: pong.clientSendTime, serverReceiveTime: server, serverSendTime: server))]
        case .playPrepare:
            let prepare = try data(PirateRadio.PlayPrepare.self)
            // The start is not known until the commit: announce it far ahead so the engine loads and waits.
            return [envelope(.playPrepare(PlayPrepare(
                item: item(prepare.track, epoch: header.epoch), epoch: header.epoch, startAt: header.timestamp + 3_600_000, previous: nil)), header)]
        case .playCommit:
            let commit = try data(PirateRadio.TimelineData.self)
            guard let at = commit.ntpTimestamp else { return [] }
            startedEpoch = header.epoch
            playingEpoch = header.epoch
            return [envelope(.playCommit(PlayCommit(
                itemId: itemId(header.epoch), epoch: header.epoch, startAt: Int64(at.rounded()), positionMs: Int64(commit.positionMs.rounded()))), header)]
        case .stateSync:
            let snapshot = try data(PirateRadio.Snapshot.self)
            guard let track = snapshot.currentTrack else { return [] }
            if snapshot.isPlaying {
                guard snapshot.epoch != startedEpoch else { return [] }
                startedEpoch = snapshot.epoch
                playingEpoch = snapshot.epoch
                let item = item(track, epoch: snapshot.epoch)
                return [
                    envelope(.playPrepare(PlayPrepare(item: item, epoch: snapshot.epoch, startAt: snapshot.positionTimestamp, previous: nil)), header),
                    envelope(.playCommit(PlayCommit(
                        itemId: item.id, epoch: snapshot.epoch, startAt: snapshot.positionTimestamp, positionMs: snapshot.positionMs)), header),
                ]
            }
            guard playingEpoch != nil else { return [] }
            playingEpoch = nil
            return [envelope(.stopped(PlaybackStopped(epoch: snapshot.epoch, previous: nil)), header)]
        case .pause, .resume, .seek:
            // The benchmark's DJ never sends these: it starts, skips and lets tracks run out.
            return []
        case .driftReport, .queueUpdate, .memberJoined, .memberLeft, .error:
            // Nothing here moves playback.
            return []
        }
    }

    /// PirateRadio has no item ids: one per epoch.
    private func itemId(_ epoch: Int64) -> ItemID { JamID("pirate-epoch-\(epoch)") }

    /// The queue item standing for `track` in `epoch`.
    private func item(_ track: PirateRadio.Track, epoch: Int64) -> QueueItem {
        QueueItem(id: itemId(epoch), track: track.openJam, addedBy: member, addedAt: 0, score: 0, reason: "")
    }

    /// An OpenJam envelope with the frame's epoch, seq and timestamp.
    private func envelope(_ event: ServerEvent, _ header: Stamp) -> Output {
        .envelope(ServerEnvelope(event: event, epoch: header.epoch, seq: header.seq, timestamp: header.timestamp))
    }
}
