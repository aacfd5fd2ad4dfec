import JamCore
import JamProtocol
import Logging

extension LiveSession {
    /// Counts and logs a refused command or message: one structured line with the session
    /// (in the logger's metadata), the member, the error code and what was refused. Rate-limit
    /// refusals log at debug, so a flooding client cannot flood the log too; so do refusals
    /// while the store takes no writes, which the pipeline logs once for all of them.
    func noteRefusal(_ error: any Error, by user: UserID?, what: String) {
        Metrics.commandFailed(error)
        let code = (error as? JamError)?.code ?? .internal
        var metadata: Logger.Metadata = ["error.code": "\(code.rawValue)", "command": "\(what)", "error": .loggable(error)]
        if let user { metadata["member.id"] = "\(user)" }
        let quiet = code == .rateLimited || code == .unavailable
        logger.log(level: quiet ? .debug : .info, "command refused", metadata: metadata)
    }
}

extension SessionInput {
    /// The input's kind as a log names it ("add", "vote", "advance").
    var logName: String {
        switch self {
        case .command(let command, _): command.logName
        case .advance: "advance"
        case .supplyFallback: "supplyFallback"
        case .keepFallback: "keepFallback"
        case .restart: "restart"
        case .idleEnd: "idleEnd"
        }
    }
}

extension Command {
    /// The command's case name, without its payload (which may hold names people typed).
    var logName: String {
        switch self {
        case .join: "join"
        case .leave: "leave"
        case .connect: "connect"
        case .disconnect: "disconnect"
        case .add: "add"
        case .remove: "remove"
        case .vote: "vote"
        case .skip: "skip"
        case .requestSkip: "requestSkip"
        case .withdrawSkipRequest: "withdrawSkipRequest"
        case .finish: "finish"
        case .play: "play"
        case .pause: "pause"
        case .resume: "resume"
        case .seek: "seek"
        case .ready: "ready"
        case .syncReport: "syncReport"
        case .updateSettings: "updateSettings"
        case .setRole: "setRole"
        case .kick: "kick"
        case .setDeviceDelay: "setDeviceDelay"
        case .setJoinCode: "setJoinCode"
        case .end: "end"
        case .djPrepare: "djPrepare"
        case .djTimeline: "djTimeline"
        case .whileCurrent(_, let command): command.logName
        case .all: "all"
        }
    }
}

extension DeviceSyncRequest {
    /// The message's type as a log names it.
    var logName: String {
        switch self {
        case .report: "syncReport"
        case .calibrate: "calibrate"
        case .calibrationReport: "calibrationReport"
        case .resync: "resync"
        }
    }
}

extension SessionRequest {
    /// The message's kind as a log names it.
    var logName: String {
        switch self {
        case .command(let command, _, _): command.logName
        case .deviceSync(let request, _): request.logName
        case .hello: "hello"
        case .ping: "ping"
        case .toHost: "toHost"
        case .reply: "reply"
        case .refuse: "message"
        case .ignore: "ignored"
        }
    }
}
