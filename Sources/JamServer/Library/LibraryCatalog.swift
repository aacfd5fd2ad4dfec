import JamMedia

/// The music library the server offers right now; a rescan replaces it whole, so a
/// request always sees one consistent scan.
public actor LibraryCatalog {
    /// The current scan.
    public private(set) var library: MusicLibrary

    /// Starts with `library`.
    public init(_ library: MusicLibrary) {
        self.library = library
    }

    /// Puts a newer scan in place.
    func replace(with newer: MusicLibrary) {
        library = newer
    }
}
