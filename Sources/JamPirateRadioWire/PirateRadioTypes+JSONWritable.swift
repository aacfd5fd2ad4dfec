import JamProtocol

// PirateRadio payloads write themselves with `JSONWriter`, keys sorted: the same bytes as
// `WireCoding.encoder` (`PirateRadioJSONTests` compares them). Queue updates and snapshots
// are written as `ShownQueue` and `ShownSnapshot` (below), with tracks as their clients sent
// them; `QueueUpdate` only reads them, and `Snapshot` shares `ShownSnapshot`'s fields.

extension PirateRadio.Track: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("albumArtURL", ifPresent: albumArtURL)
            $0.field("albumName", ifPresent: albumName)
            $0.field("artist", artist)
            $0.field("durationMs", ifPresent: durationMs)
            $0.field("id", id)
            $0.field("name", name)
        }
    }
}

extension PirateRadio.Member: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("displayName", displayName)
            $0.field("userId", userId)
        }
    }
}

extension PirateRadio.Pong: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("clientSendTime", clientSendTime)
            $0.field("serverTime", serverTime)
        }
    }
}

extension PirateRadio.MemberEvent: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("displayName", ifPresent: displayName)
            $0.field("userId", userId)
        }
    }
}

extension PirateRadio.ErrorMessage: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { $0.field("message", message) }
    }
}

extension PirateRadio {
    /// A payload as JSON text for `frame(type:data:...)`, written without `JSONEncoder`.
    public static func json(_ value: some JSONWritable) -> String {
        String(decoding: JSONWriter.encode(value), as: UTF8.self)
    }
}

// What a PirateRadio client sends (the benchmark's devices speak it too).

extension PirateRadio.Ping: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { $0.field("clientSendTime", clientSendTime) }
    }
}

extension PirateRadio.PlayPrepare: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("track", track)
            $0.field("trackId", trackId)
        }
    }
}

extension PirateRadio.TimelineData: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("executionTime", ifPresent: executionTime)
            $0.field("ntpTimestamp", ifPresent: ntpTimestamp)
            $0.field("positionMs", positionMs)
        }
    }
}

extension PirateRadio.AddToQueue: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("nonce", nonce)
            $0.field("track", track)
        }
    }
}

extension PirateRadio.RemoveFromQueue: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { $0.field("trackId", trackId) }
    }
}

// What the server writes: tracks as their clients sent them, which no fixed type describes.

extension PirateRadio {
    /// `queueUpdate` data as the server writes it: entries as their clients sent them.
    package struct ShownQueue: JSONWritable {
        package var queue: [RawJSON]

        /// Creates the queue as shown.
        package init(queue: [RawJSON]) { self.queue = queue }

        package func write(to json: inout JSONWriter) {
            json.object { $0.field("queue", array: queue) }
        }
    }

    /// A snapshot as the server writes it (`stateSync` data, `GET /sessions/{id}`), with
    /// `currentTrack` and the queue as their clients sent them; `Snapshot` reads it.
    package typealias ShownSnapshot = SnapshotOf<RawJSON>
}

extension PirateRadio {
    /// `GET /admin/sessions`: every session as its server lists them for monitoring.
    package struct AdminSessions: JSONWritable {
        package var sessions: [AdminSession]
        package var serverTime: Int64

        /// Creates the list.
        package init(sessions: [AdminSession], serverTime: Int64) {
            self.sessions = sessions
            self.serverTime = serverTime
        }

        package func write(to json: inout JSONWriter) {
            json.object {
                $0.field("serverTime", serverTime)
                $0.field("sessions", array: sessions)
            }
        }
    }

    /// One session of `AdminSessions`: its snapshot, with members' arrival and liveness, and
    /// when it last heard from anyone and when its code was given.
    package struct AdminSession: JSONWritable {
        package var snapshot: ShownSnapshot
        package var members: [AdminMember]
        package var lastActivity: Int64
        package var codeCreatedAt: Int64

        /// Creates the entry; `members` stand in for the snapshot's.
        package init(snapshot: ShownSnapshot, members: [AdminMember], lastActivity: Int64, codeCreatedAt: Int64) {
            self.snapshot = snapshot
            self.members = members
            self.lastActivity = lastActivity
            self.codeCreatedAt = codeCreatedAt
        }

        package func write(to json: inout JSONWriter) {
            json.object {
                $0.field("codeCreatedAt", codeCreatedAt)
                $0.field("creatorId", snapshot.creatorId)
                $0.field("currentTrack", orNull: snapshot.currentTrack)
                $0.field("djUserId", snapshot.djUserId)
                $0.field("epoch", snapshot.epoch)
                $0.field("id", snapshot.id)
                $0.field("isPlaying", snapshot.isPlaying)
                $0.field("joinCode", snapshot.joinCode)
                $0.field("lastActivity", lastActivity)
                $0.field("members", array: members)
                $0.field("positionMs", snapshot.positionMs)
                $0.field("positionTimestamp", snapshot.positionTimestamp)
                $0.field("queue", array: snapshot.queue)
                $0.field("sequence", snapshot.sequence)
            }
        }
    }

    /// A member of `AdminSession`: `alive` while their socket is open.
    package struct AdminMember: JSONWritable {
        package var userId: String
        package var displayName: String
        package var joinedAt: Int64
        package var alive: Bool

        /// Creates the member.
        package init(userId: String, displayName: String, joinedAt: Int64, alive: Bool) {
            self.userId = userId
            self.displayName = displayName
            self.joinedAt = joinedAt
            self.alive = alive
        }

        package func write(to json: inout JSONWriter) {
            json.object {
                $0.field("alive", alive)
                $0.field("displayName", displayName)
                $0.field("joinedAt", joinedAt)
                $0.field("userId", userId)
            }
        }
    }
}

extension PirateRadio.SnapshotOf: JSONWritable where Entry: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("creatorId", creatorId)
            $0.field("currentTrack", orNull: currentTrack)
            $0.field("djUserId", djUserId)
            $0.field("epoch", epoch)
            $0.field("id", id)
            $0.field("isPlaying", isPlaying)
            $0.field("joinCode", joinCode)
            $0.field("members", array: members)
            $0.field("positionMs", positionMs)
            $0.field("positionTimestamp", positionTimestamp)
            $0.field("queue", array: queue)
            $0.field("sequence", sequence)
        }
    }
}
