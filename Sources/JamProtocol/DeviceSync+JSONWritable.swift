// The device-sync and calibration frames, written without `JSONEncoder` in sorted key
// order; `JSONWriterTests` proves them byte-identical to `WireCoding.encoder`.

extension SyncGrade: JSONWritable {}

extension DeviceRef: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("deviceId", deviceId)
            $0.field("userId", userId)
        }
    }
}

extension DeviceDelay: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("delayMs", delayMs)
            $0.field("deviceId", deviceId)
            $0.field("userId", userId)
        }
    }
}

extension Resync: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("deviceId", ifPresent: deviceId)
            $0.field("userId", userId)
        }
    }
}

extension DeviceSyncStatus: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("ageMs", ageMs)
            $0.field("canListen", ifPresent: canListen)
            $0.field("clockDriftPpm", ifPresent: clockDriftPpm)
            $0.field("clockErrorMs", clockErrorMs)
            $0.field("delayMs", ifPresent: delayMs)
            $0.field("deviceId", ifPresent: deviceId)
            $0.field("grade", grade)
            $0.field("outputLatencyMs", ifPresent: outputLatencyMs)
            $0.field("playbackErrorMs", playbackErrorMs)
            $0.field("playing", playing)
            $0.field("userId", userId)
        }
    }
}

extension SyncStatusUpdate: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { $0.field("devices", array: devices) }
    }
}

extension CalibrationProbe: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("atMs", atMs)
            $0.field("deviceId", deviceId)
            $0.field("userId", userId)
        }
    }
}

extension CalibrationPlan: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("listener", listener)
            $0.field("probeMs", probeMs)
            $0.field("probes", array: probes)
            $0.field("repeatMs", repeatMs)
            $0.field("repeats", repeats)
            $0.field("windowMs", windowMs)
        }
    }
}

extension CalibrationDeviceResult: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("correctionMs", ifPresent: correctionMs)
            $0.field("delayMs", ifPresent: delayMs)
            $0.field("deviceId", deviceId)
            $0.field("heard", heard)
            $0.field("userId", userId)
        }
    }
}

extension CalibrationOutcome: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("message", message)
            $0.field("ok", ok)
            $0.field("results", array: results)
        }
    }
}
