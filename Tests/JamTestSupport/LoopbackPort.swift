import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Loopback ports for servers a test starts on a port of its choosing.
public enum LoopbackPort {
    /// A port nobody listens on right now, from the kernel's ephemeral range.
    public static func free() throws -> Int {
        guard let port = try bound(0) else { throw TestFailure("no free loopback port") }
        return port
    }

    /// A free port below the kernel's ephemeral range (32768 on), for a server that stops and
    /// starts again on it: a socket another test opens meanwhile takes its port from that
    /// range, so it cannot take this one between the two.
    public static func forRestarts() throws -> Int {
        for _ in 0..<100 {
            if let port = try bound(Int.random(in: 20_000..<32_000)) { return port }
        }
        throw TestFailure("no free loopback port between 20000 and 32000")
    }

    /// The port a socket bound to `port` on 127.0.0.1 got (the kernel's pick for 0), or nil
    /// when it is taken.
    private static func bound(_ port: Int) throws -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else {
            if errno == EADDRINUSE { return nil }
            throw TestFailure("bind() failed: errno \(errno)")
        }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard named == 0 else { throw TestFailure("getsockname() failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
