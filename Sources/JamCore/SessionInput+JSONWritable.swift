import JamProtocol

// The session log stores every input; `JSONEncoder` made that a tenth of the server's CPU
// under load. These write the same bytes as the synthesized `Codable` forms with sorted
// keys (`SessionInputJSONTests` compares them case by case), so the log stays readable
// with `JSONDecoder` and any SQLite client.

extension TimedInput: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("at", at)
            $0.field("input", input)
        }
    }
}

extension SessionInput: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            switch self {
            case .command(let command, let user):
                json.key("command")
                json.object {
                    $0.field("_0", command)
                    $0.field("by", user)
                }
            case .advance:
                json.key("advance")
                json.object { _ in }
            case .supplyFallback(let tracks):
                json.key("supplyFallback")
                json.object { $0.field("_0", array: tracks) }
            case .keepFallback(let ids):
                json.key("keepFallback")
                json.object { $0.field("_0", array: ids.sorted()) }
            case .restart(let timing):
                json.key("restart")
                json.object { $0.field("_0", timing) }
            case .idleEnd:
                json.key("idleEnd")
                json.object { _ in }
            }
        }
    }
}

extension Command: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            switch self {
            case .join(let displayName):
                json.key("join")
                json.object { $0.field("displayName", displayName) }
            case .leave: Self.empty("leave", &json)
            case .connect: Self.empty("connect", &json)
            case .disconnect: Self.empty("disconnect", &json)
            case .add(let track, let nonce, let itemId):
                json.key("add")
                json.object {
                    $0.field("itemId", itemId)
                    $0.field("nonce", nonce)
                    $0.field("track", track)
                }
            case .remove(let itemId):
                json.key("remove")
                json.object { $0.field("itemId", itemId) }
            case .vote(let itemId, let value):
                json.key("vote")
                json.object {
                    $0.field("itemId", itemId)
                    $0.field("value", value)
                }
            case .skip: Self.empty("skip", &json)
            case .requestSkip: Self.empty("requestSkip", &json)
            case .withdrawSkipRequest: Self.empty("withdrawSkipRequest", &json)
            case .finish: Self.empty("finish", &json)
            case .play: Self.empty("play", &json)
            case .pause: Self.empty("pause", &json)
            case .resume: Self.empty("resume", &json)
            case .seek(let positionMs):
                json.key("seek")
                json.object { $0.field("positionMs", positionMs) }
            case .ready(let epoch):
                json.key("ready")
                json.object { $0.field("epoch", epoch) }
            case .syncReport(let report):
                json.key("syncReport")
                json.object { $0.field("_0", report) }
            case .updateSettings(let patch):
                json.key("updateSettings")
                json.object { $0.field("_0", patch) }
            case .setRole(let userId, let role):
                json.key("setRole")
                json.object {
                    $0.field("role", role)
                    $0.field("userId", userId)
                }
            case .kick(let userId):
                json.key("kick")
                json.object { $0.field("userId", userId) }
            case .setDeviceDelay(let delay):
                json.key("setDeviceDelay")
                json.object { $0.field("_0", delay) }
            case .setJoinCode(let code):
                json.key("setJoinCode")
                json.object { $0.field("_0", code) }
            case .end: Self.empty("end", &json)
            case .djPrepare(let track, let itemId):
                json.key("djPrepare")
                json.object {
                    $0.field("itemId", itemId)
                    $0.field("track", track)
                }
            case .djTimeline(let change):
                json.key("djTimeline")
                json.object { $0.field("_0", change) }
            case .all(let commands):
                json.key("all")
                json.object { $0.field("_0", array: commands) }
            case .whileCurrent(let epoch, let command):
                json.key("whileCurrent")
                json.object {
                    $0.field("command", command)
                    $0.field("epoch", epoch)
                }
            }
        }
    }

    private static func empty(_ name: StaticString, _ json: inout JSONWriter) {
        json.key(name)
        json.object { _ in }
    }
}

extension DJTimeline: JSONWritable {
    public func write(to json: inout JSONWriter) {
        let (name, positionMs, at): (StaticString, Int64, Millis) = switch self {
        case .commit(let positionMs, let at): ("commit", positionMs, at)
        case .pause(let positionMs, let at): ("pause", positionMs, at)
        case .resume(let positionMs, let at): ("resume", positionMs, at)
        case .seek(let positionMs, let at): ("seek", positionMs, at)
        }
        json.object {
            $0.key(name)
            $0.object {
                $0.field("at", at)
                $0.field("positionMs", positionMs)
            }
        }
    }
}

extension Timing: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("abandonAfterMs", ifPresent: abandonAfterMs)
            $0.field("commitMarginMs", commitMarginMs)
            $0.field("dropAwayMs", ifPresent: dropAwayMs)
            $0.field("maxLeadMs", maxLeadMs)
            $0.field("minLeadMs", minLeadMs)
            $0.field("prepareAheadMs", prepareAheadMs)
            $0.field("unattendedPauseMs", ifPresent: unattendedPauseMs)
        }
    }
}

extension SyncReport: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("canListen", ifPresent: canListen)
            $0.field("clockDriftPpm", ifPresent: clockDriftPpm)
            $0.field("delayMs", ifPresent: delayMs)
            $0.field("deviceId", ifPresent: deviceId)
            $0.field("driftMs", driftMs)
            $0.field("epoch", epoch)
            $0.field("errorMs", errorMs)
            $0.field("offsetMs", offsetMs)
            $0.field("outputLatencyMs", ifPresent: outputLatencyMs)
            $0.field("playing", ifPresent: playing)
        }
    }
}

extension SettingsPatch: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("addCooldownSeconds", ifPresent: addCooldownSeconds)
            $0.field("allowDuplicates", ifPresent: allowDuplicates)
            $0.field("fallback", ifPresent: fallback)
            $0.field("locked", ifPresent: locked)
            $0.field("maxMembers", ifPresent: maxMembers)
            $0.field("maxQueuedPerMember", ifPresent: maxQueuedPerMember)
            $0.field("ordering", ifPresent: ordering)
            $0.field("skipThreshold", ifPresent: skipThreshold)
        }
    }
}
