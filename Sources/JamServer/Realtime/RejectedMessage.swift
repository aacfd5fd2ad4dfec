import JamProtocol

/// A message that did not decode: the session answers it with the profile's error.
struct RejectedMessage: DecodedMessage {
    let error: JamError
    let id: String?
}
