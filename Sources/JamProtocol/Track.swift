/// Where a track comes from.
public enum TrackSource: String, Codable, Sendable, CaseIterable, WireEnum {
    case library, spotify, appleMusic, external
}

/// A playable song as every client and the server see it.
public struct Track: Codable, Hashable, Sendable {
    /// The track's identifier within its source (library ID, Spotify ID...).
    public var id: String
    /// The title.
    public var name: String
    /// The performing artist.
    public var artist: String
    /// The album, when known.
    public var album: String?
    /// Length in milliseconds, when known; without it the server cannot auto-advance.
    public var durationMs: Int64?
    /// Cover art URL, when known.
    public var artworkURL: String?
    /// International Standard Recording Code, when known.
    public var isrc: String?
    /// The catalogue the track comes from.
    public var source: TrackSource
    /// The track as a compatibility profile's client sent it (JSON text, that profile's extra
    /// fields included), kept with the item so the profile can show it back exactly, also after
    /// a restart. Not part of OpenJam's own protocol: its edges refuse it.
    public var asSent: String?

    /// Largest `asSent`, in bytes.
    public static let maxAsSentBytes = 8192
    /// Longest `id`, in characters.
    public static let maxIdLength = 256
    /// Longest `name`, `artist` and `album`, in characters.
    public static let maxTextLength = 300
    /// Longest `isrc`, in characters.
    public static let maxISRCLength = 32
    /// Longest `artworkURL`, in characters.
    public static let maxArtworkURLLength = 2048
    /// Longest `durationMs`: a day.
    public static let maxDurationMs: Int64 = 24 * 3_600_000

    /// Creates a track.
    public init(
        id: String, name: String, artist: String, album: String? = nil, durationMs: Int64? = nil,
        artworkURL: String? = nil, isrc: String? = nil, source: TrackSource = .external, asSent: String? = nil
    ) {
        self.id = id
        self.name = name
        self.artist = artist
        self.album = album
        self.durationMs = durationMs
        self.artworkURL = artworkURL
        self.isrc = isrc
        self.source = source
        self.asSent = asSent
    }

    /// Checks the limits every edge enforces on a track a client sends. `requireIdAndName`
    /// false is a compatibility profile's rule: `id` and `name` may be empty (PirateRadio's
    /// server requires neither) and `asSent` may be kept; the length and character limits
    /// hold either way. `capBytes` false leaves out the byte limit (`Validate.maxBytesPerCharacter`)
    /// for sessions stored before it, whose logged adds must replay as they were applied.
    public func validate(requireIdAndName: Bool = true, capBytes: Bool = true) throws(JamError) {
        try Validate.text(id, field: "track.id", max: Self.maxIdLength, allowEmpty: !requireIdAndName, capBytes: capBytes)
        try Validate.text(name, field: "track.name", max: Self.maxTextLength, allowEmpty: !requireIdAndName, capBytes: capBytes)
        try Validate.text(artist, field: "track.artist", max: Self.maxTextLength, allowEmpty: true, capBytes: capBytes)
        if let album { try Validate.text(album, field: "track.album", max: Self.maxTextLength, allowEmpty: true, capBytes: capBytes) }
        if let durationMs, durationMs <= 0 || durationMs > Self.maxDurationMs {
            throw JamError(.invalidField, "track.durationMs must be between 1 ms and 24 hours, got \(durationMs)")
        }
        if let artworkURL {
            try Validate.text(artworkURL, field: "track.artworkURL", max: Self.maxArtworkURLLength, allowEmpty: true, capBytes: capBytes)
        }
        if let isrc { try Validate.text(isrc, field: "track.isrc", max: Self.maxISRCLength, allowEmpty: true, capBytes: capBytes) }
        if let asSent {
            guard !requireIdAndName else { throw JamError(.invalidField, "track.asSent is not part of OpenJam's protocol") }
            guard asSent.utf8.count <= Self.maxAsSentBytes else {
                throw JamError(.invalidField, "track.asSent must be at most \(Self.maxAsSentBytes) bytes, got \(asSent.utf8.count)")
            }
        }
    }
}

/// Shared input limits, so REST and the socket reject the same things the same way.
public enum Validate {
    /// Longest display name, in characters.
    public static let maxDisplayName = 64
    /// Longest session name, in characters.
    public static let maxSessionName = 100
    /// Longest nonce, in bytes.
    public static let maxNonce = 128
    /// UTF-8 bytes a text field may hold for each character of its limit. A character can be
    /// several code points (an accent typed apart from its letter, a flag, a joined emoji),
    /// and nothing else bounds how many: one letter under thousands of marks counts as one
    /// character, and would carry a whole frame into every member's queue and state. Eight
    /// bytes per character keeps any script's usual text, `max` flags or accented letters,
    /// and refuses that.
    public static let maxBytesPerCharacter = 8

    /// Whether `value` holds a control character, which no text OpenJam shows may.
    public static func hasControlCharacters(_ value: String) -> Bool {
        value.unicodeScalars.contains(where: isControl)
    }

    /// The one test for a control character, for refusing text and for cleaning it.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control
    }

    /// Text from files (tags, file names) made fit to show and to add: control characters
    /// become spaces, spaces at either end go, and it is cut to `max` characters and to
    /// `maxBytesPerCharacter` bytes for each. Input is refused for the same faults; a file
    /// cannot be asked again.
    public static func displayable(_ value: String, max: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            scalars.append(isControl(scalar) ? " " : scalar)
        }
        return cut(String(scalars).trimmingCharacters(in: .whitespacesAndNewlines), max: max)
    }

    /// `value` cut to what `text(_:field:max:)` takes: `max` characters, and
    /// `maxBytesPerCharacter` bytes for each (whole characters go).
    public static func cut(_ value: String, max: Int) -> String {
        var kept = String(value.prefix(max))
        while kept.utf8.count > max * maxBytesPerCharacter { kept.removeLast() }
        return kept
    }

    /// Rejects empty (unless allowed) or over-long text and control characters. Over-long is
    /// more than `max` characters, or (with `capBytes`) more than `maxBytesPerCharacter`
    /// bytes of UTF-8 for each of them.
    public static func text(_ value: String, field: String, max: Int, allowEmpty: Bool = false, capBytes: Bool = true) throws(JamError) {
        if !allowEmpty && value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw JamError(.invalidField, "\(field) must not be empty")
        }
        if value.count > max {
            throw JamError(.invalidField, "\(field) must be at most \(max) characters, got \(value.count)")
        }
        if capBytes, value.utf8.count > max * maxBytesPerCharacter {
            throw JamError(
                .invalidField,
                "\(field) must be at most \(max * maxBytesPerCharacter) bytes of UTF-8 (accents typed apart and joined emoji count several), got \(value.utf8.count)")
        }
        if hasControlCharacters(value) {
            throw JamError(.invalidField, "\(field) must not contain control characters")
        }
    }

    /// Returns the trimmed display name or throws when it is empty, too long, holds a
    /// character that turns the direction of text, or shows nothing (unless
    /// `allowsMisleadingNames`: a name a logged join carries was taken when no rule refused these).
    public static func displayName(
        _ value: String, field: String = "displayName", capBytes: Bool = true, allowsMisleadingNames: Bool = false
    ) throws(JamError) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        try text(trimmed, field: field, max: maxDisplayName, capBytes: capBytes)
        guard !allowsMisleadingNames else { return trimmed }
        if trimmed.unicodeScalars.contains(where: turnsDirection) {
            throw JamError(
                .invalidField,
                "\(field) must not contain characters that turn the direction of text (U+202A to U+202E, U+2066 to U+2069): they can make one name read as another")
        }
        if !trimmed.unicodeScalars.contains(where: shows) {
            throw JamError(.invalidField, "\(field) must have a character that shows: fillers and zero-width characters alone show no name")
        }
        return trimmed
    }

    /// Whether `scalar` shows as something: not white space, not a character Unicode lets a
    /// display leave out (fillers such as U+3164, zero-width and other format characters), and
    /// not the blank braille pattern U+2800. A name of only such characters shows as nobody.
    public static func shows(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        return !properties.isWhitespace && !properties.isDefaultIgnorableCodePoint && properties.generalCategory != .format && scalar != "\u{2800}"
    }

    /// The embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder
    /// the text after them: "\u{202E}ecila" shows as "alice". Right-to-left letters and the
    /// marks U+200E and U+200F stay allowed; they order nothing but themselves.
    public static func turnsDirection(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// `value` without the characters that turn the direction of text: a name taken before
    /// they were refused, in a token a server signed then, is used without them.
    public static func withoutDirectionControls(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: turnsDirection) else { return value }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: value.unicodeScalars.lazy.filter { !turnsDirection($0) })
        return String(scalars)
    }

    /// Rejects an empty or over-long nonce.
    public static func nonce(_ value: String) throws(JamError) {
        if value.isEmpty { throw JamError(.invalidField, "nonce must not be empty") }
        if value.utf8.count > maxNonce { throw JamError(.invalidField, "nonce must be at most \(maxNonce) bytes") }
    }

    /// Rejects a vote other than -1, 0 or +1.
    public static func vote(_ value: Int) throws(JamError) {
        guard (-1...1).contains(value) else {
            throw JamError(.invalidField, "vote value must be -1, 0 or 1, got \(value)")
        }
    }

    /// Rejects a negative or absurd playback position, named as the request names it.
    public static func position(_ value: Int64, field: String = "positionMs") throws(JamError) {
        guard value >= 0 else { throw JamError(.invalidField, "\(field) must not be negative, got \(value)") }
        guard value <= Track.maxDurationMs else { throw JamError(.invalidField, "\(field) must be at most 24 hours") }
    }

    /// Rejects a negative epoch: epochs count songs from 0, so none could be meant.
    public static func epoch(_ value: Int64?) throws(JamError) {
        if let value, value < 0 { throw JamError(.invalidField, "epoch must not be negative, got \(value)") }
    }
}

import Foundation
