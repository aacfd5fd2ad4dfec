import NIOCore

extension Serve {
    /// Where phones and other computers open a server bound to every interface ("0.0.0.0" or
    /// "::"): that address names no machine, so the listening line alone leads nowhere. One link
    /// per address of this machine that another can reach (not loopback, not link-local); none
    /// for a server bound to one address, whose listening line is already the link.
    static func linksForOtherDevices(host: String, port: Int, addresses: [String]) -> [String] {
        let ipv4Only: Bool
        switch host {
        case "0.0.0.0": ipv4Only = true
        case "::", "[::]": ipv4Only = false
        default: return []
        }
        var links: [String] = []
        var seen: Set<String> = []
        // An interface's several entries (one per address family or alias) name an address once.
        for address in addresses.map({ $0.lowercased() }) where seen.insert(address).inserted {
            if address.contains(":") {
                // IPv6: neither loopback nor link-local (fe80::/10), and only when bound to "::".
                guard !ipv4Only, address != "::1", !["fe8", "fe9", "fea", "feb"].contains(where: address.hasPrefix) else { continue }
                links.append("http://[\(address)]:\(port)")
            } else {
                guard !address.hasPrefix("127."), !address.hasPrefix("169.254.") else { continue }
                links.append("http://\(address):\(port)")
            }
        }
        return links
    }

    /// This machine's interface addresses, as text; none when they cannot be listed (the
    /// listening line still stands).
    static func interfaceAddresses() -> [String] {
        do {
            return try System.enumerateDevices().compactMap { $0.address?.ipAddress }
        } catch {
            return []
        }
    }
}
