import ArgumentParser

extension Serve {
    /// The protocols `--profile` and JAM_PROFILE name, spelled as on the command line.
    enum ProfileName: String, CaseIterable, ExpressibleByArgument {
        case openjam
        case pirateRadio = "pirate-radio"
        case queueit

        /// The option when given, else JAM_PROFILE, else OpenJam's own protocol.
        static func chosen(_ option: ProfileName?, environment: [String: String]) throws -> ProfileName {
            if let option { return option }
            guard let text = environment["JAM_PROFILE"] else { return .openjam }
            guard let name = ProfileName(rawValue: text) else {
                let names = allCases.map(\.rawValue)
                let spelled = names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
                throw ValidationError("unknown profile \"\(text)\"; use \(spelled)")
            }
            return name
        }

        /// Whether it listens like PirateRadio's own server: every interface, port 3000, and
        /// PORT and JWT_SECRET read before OpenJam's variables.
        var listensLikePirateRadio: Bool {
            switch self {
            case .pirateRadio: true
            case .openjam, .queueit: false
            }
        }
    }
}
