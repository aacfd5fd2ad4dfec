// Every type a server frame carries writes itself with `JSONWriter`, keys in sorted order.
// `JSONWriterTests` proves each one byte-identical to `WireCoding.encoder`.

extension ServerEnvelope: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.key("data")
            event.writePayload(to: &$0)
            $0.field("epoch", epoch)
            $0.field("seq", seq)
            $0.field("timestamp", timestamp)
            $0.field("type", event.type.rawValue)
        }
    }

    /// The envelope as JSON bytes, written without `JSONEncoder`.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        write(to: &writer)
        return writer.bytes
    }
}

extension ServerEvent {
    /// Writes the event's `data`.
    func writePayload(to json: inout JSONWriter) {
        switch self {
        case .stateSync(let v): v.write(to: &json)
        case .memberJoined(let v): v.write(to: &json)
        case .memberLeft(let v): v.write(to: &json)
        case .memberUpdated(let v): v.write(to: &json)
        case .queueUpdate(let v): v.write(to: &json)
        case .queueItemAdded(let v): v.write(to: &json)
        case .queueItemRemoved(let v): v.write(to: &json)
        case .votesUpdate(let v): v.write(to: &json)
        case .playPrepare(let v): v.write(to: &json)
        case .playCommit(let v): v.write(to: &json)
        case .pause(let v): v.write(to: &json)
        case .resume(let v): v.write(to: &json)
        case .seek(let v): v.write(to: &json)
        case .stopped(let v): v.write(to: &json)
        case .skipRequests(let v): v.write(to: &json)
        case .sessionUpdated(let v): v.write(to: &json)
        case .pong(let v): v.write(to: &json)
        case .ack(let v): v.write(to: &json)
        case .error(let v): v.write(to: &json)
        case .sessionEnded(let v): v.write(to: &json)
        case .deviceDelay(let v): v.write(to: &json)
        case .syncStatus(let v): v.write(to: &json)
        case .calibration(let v): v.write(to: &json)
        case .calibrationResult(let v): v.write(to: &json)
        case .resync(let v): v.write(to: &json)
        case .myChoices(let v): v.write(to: &json)
        }
    }
}

extension Role: JSONWritable {}
extension TrackSource: JSONWritable {}
extension QueueOrdering: JSONWritable {}
extension PlaybackState: JSONWritable {}
extension HistoryOutcome: JSONWritable {}
extension ErrorCode: JSONWritable {}

extension Track: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("album", ifPresent: album)
            $0.field("artist", artist)
            $0.field("artworkURL", ifPresent: artworkURL)
            $0.field("asSent", ifPresent: asSent)
            $0.field("durationMs", ifPresent: durationMs)
            $0.field("id", id)
            $0.field("isrc", ifPresent: isrc)
            $0.field("name", name)
            $0.field("source", source)
        }
    }
}

extension Member: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("connected", connected)
            $0.field("displayName", displayName)
            $0.field("lastAddedAt", ifPresent: lastAddedAt)
            $0.field("role", role)
            $0.field("userId", userId)
        }
    }
}

extension QueueItem: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("addedAt", addedAt)
            $0.field("addedBy", addedBy)
            $0.field("id", id)
            $0.field("reason", reason)
            $0.field("score", score)
            $0.field("track", track)
        }
    }
}

extension MemberLeft: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("hostId", hostId)
            $0.field("userId", userId)
        }
    }
}

extension QueueUpdate: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { $0.field("queue", array: queue) }
    }
}

extension QueueItemAdded: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("index", index)
            $0.field("item", item)
        }
    }
}

extension QueueItemRemoved: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { $0.field("itemId", itemId) }
    }
}

extension VotesUpdate: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("itemId", itemId)
            $0.field("movedTo", ifPresent: movedTo)
            $0.field("reason", reason)
            $0.field("score", score)
        }
    }
}

extension PlayPrepare: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("epoch", epoch)
            $0.field("item", item)
            $0.field("previous", ifPresent: previous)
            $0.field("startAt", startAt)
        }
    }
}

extension PlayCommit: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("epoch", epoch)
            $0.field("itemId", itemId)
            $0.field("positionMs", positionMs)
            $0.field("startAt", startAt)
        }
    }
}

extension TimelineChange: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("atMs", atMs)
            $0.field("epoch", epoch)
            $0.field("positionMs", positionMs)
        }
    }
}

extension PlaybackStopped: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("epoch", epoch)
            $0.field("previous", ifPresent: previous)
        }
    }
}

extension SkipRequestsUpdate: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("count", count)
            $0.field("needed", needed)
        }
    }
}

extension MyChoices: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("mySkipRequest", mySkipRequest)
            $0.field("myVotes", myVotes)
        }
    }
}

extension SessionSettings: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("addCooldownSeconds", addCooldownSeconds)
            $0.field("allowDuplicates", allowDuplicates)
            $0.field("fallback", fallback)
            $0.field("locked", locked)
            $0.field("maxMembers", maxMembers)
            $0.field("maxQueuedPerMember", maxQueuedPerMember)
            $0.field("ordering", ordering)
            $0.field("skipThreshold", skipThreshold)
        }
    }
}

extension SessionUpdated: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("joinCode", joinCode)
            $0.field("name", name)
            $0.field("settings", settings)
        }
    }
}

extension Pong: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("clientSendTime", clientSendTime)
            $0.field("serverReceiveTime", serverReceiveTime)
            $0.field("serverSendTime", serverSendTime)
        }
    }
}

extension Ack: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("itemId", ifPresent: itemId)
            $0.field("score", ifPresent: score)
        }
    }
}

extension ErrorEvent: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("code", code)
            $0.field("id", ifPresent: id)
            $0.field("message", message)
            $0.field("retryAfterMs", ifPresent: retryAfterMs)
        }
    }
}

extension SessionEnded: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { $0.field("reason", reason) }
    }
}

extension HistoryEntry: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("endedAt", endedAt)
            $0.field("endedBy", ifPresent: endedBy)
            $0.field("endedByName", ifPresent: endedByName)
            $0.field("item", item)
            $0.field("outcome", outcome)
            $0.field("startedAt", startedAt)
        }
    }
}

extension NowPlaying: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("anchorMs", anchorMs)
            $0.field("epoch", epoch)
            $0.field("item", item)
            $0.field("positionMs", positionMs)
            $0.field("state", state)
        }
    }
}

extension SessionInfo: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("createdAt", createdAt)
            $0.field("hostDisplayName", hostDisplayName)
            $0.field("hostId", hostId)
            $0.field("id", id)
            $0.field("joinCode", joinCode)
            $0.field("name", name)
            $0.field("settings", settings)
        }
    }
}

extension SkipRequestsView: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("count", count)
            $0.field("mine", mine)
            $0.field("needed", needed)
        }
    }
}

extension SessionView: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            if let deviceDelays { $0.field("deviceDelays", array: deviceDelays) }
            $0.field("history", array: history)
            $0.field("members", array: members)
            $0.field("myVotes", myVotes)
            $0.field("nowPlaying", ifPresent: nowPlaying)
            $0.field("queue", array: queue)
            $0.field("session", session)
            $0.field("skipRequests", skipRequests)
            $0.field("upNext", ifPresent: upNext)
        }
    }
}
