import FolioPublished

/// An error from FolioKit: what went wrong, where, and whether there is still content to show.
///
/// Like swift-nio's `FileSystemError`, it carries a ``Code`` to branch on, a message that says
/// what to do, the path or URL concerned, the underlying error, and the source location that
/// raised it. Programs choose exit codes from ``code``; the library never exits.
public struct FolioError: Error, CustomStringConvertible, Sendable {
    /// The kinds of failure a caller can tell apart. New codes can be added in later releases
    /// without breaking a `switch` (as swift-nio's `FileSystemError.Code`): match the ones you
    /// handle and keep a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as in `--json` output (`edgeUnreachable`).
        public let name: String
        private init(_ name: String) { self.name = name }
        /// The name.
        public var description: String { name }

        /// There is nothing to read: no verified cache and no seed.
        public static let noContent = Code("noContent")
        /// The version being read has no entry at the path asked for.
        public static let entryNotFound = Code("entryNotFound")
        /// A stored object no longer matches its manifest entry (it is fetched again on sync).
        public static let corruptObject = Code("corruptObject")
        /// An entry's bytes are not what the caller asked them to be (plist, catalog, type).
        public static let invalidContent = Code("invalidContent")
        /// The edge could not be reached or kept failing.
        public static let edgeUnreachable = Code("edgeUnreachable")
        /// The edge answered, but with something unusable (status, manifest, object, gzip).
        public static let invalidResponse = Code("invalidResponse")
        /// The edge is in maintenance (503 with `Retry-After`): try again after
        /// ``FolioError/retryAfter``; the content held stays readable.
        public static let maintenance = Code("maintenance")
        /// The content needs a newer app (`folio-build --minimum-app-version`, or an entry's
        /// `minimumAppVersion`): ``FolioError/requiredAppVersion`` says which. What this app may
        /// read stays readable.
        public static let updateRequired = Code("updateRequired")
        /// The edge offers an older version than the one held, or (when trusting a root) than the
        /// seed's (a rollback).
        public static let downgrade = Code("downgrade")
        /// The client trusts a root key and the manifest is not signed.
        public static let unsigned = Code("unsigned")
        /// A signature does not verify over the manifest's bytes (altered, or signed over others).
        public static let badSignature = Code("badSignature")
        /// The manifest is signed by a key its key list does not authorize.
        public static let unknownSigner = Code("unknownSigner")
        /// The manifest is signed by a key its key list revokes.
        public static let revokedSigner = Code("revokedSigner")
        /// The manifest has fewer valid signatures than its key list requires.
        public static let tooFewSignatures = Code("tooFewSignatures")
        /// The signed manifest or its key list has expired (nothing newer has been signed).
        public static let expired = Code("expired")
        /// The key list is not signed by a trusted root key, or is older than one already seen.
        public static let untrustedKeyList = Code("untrustedKeyList")
        /// Another sync holds the cache.
        public static let busy = Code("busy")
        /// The sync was cancelled; the cache is as it was.
        public static let cancelled = Code("cancelled")
        /// Reading or writing the cache directory failed.
        public static let io = Code("io")
    }

    /// What kind of failure this is.
    public var code: Code
    /// One sentence: what happened and what to do about it.
    public var message: String
    /// The file or logical path concerned, if any.
    public var path: String?
    /// The URL concerned, if any.
    public var url: String?
    /// The error that caused this one, if any.
    public var underlying: (any Error)?
    /// Whether the store still has content to show (the cache or the seed) despite the failure.
    public var hasContent: Bool
    /// For ``Code-swift.struct/maintenance``: how long the edge asked clients to wait, in seconds
    /// (its `Retry-After`).
    public var retryAfter: Double?
    /// For ``Code-swift.struct/updateRequired``: the oldest app version the content is for.
    public var requiredAppVersion: String?
    /// Where in FolioKit the error was raised.
    public var location: SourceLocation

    /// A source position, for reports.
    public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
        /// The source file.
        public var file: String
        /// The line in it.
        public var line: Int
        /// `file:line`.
        public var description: String { "\(file):\(line)" }
    }

    /// Makes an error; `file` and `line` default to the caller's position.
    public init(
        _ code: Code, _ message: String, path: String? = nil, url: String? = nil,
        underlying: (any Error)? = nil, hasContent: Bool = false,
        file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.url = url
        self.underlying = underlying
        self.hasContent = hasContent
        self.location = SourceLocation(file: file, line: line)
    }

    /// The message.
    public var description: String { message }

    /// Whether the edge's content was refused by the signature checks of a trusted root.
    public var isTrustFailure: Bool { Self.trustCodes.contains(code) }

    /// The codes of manifests refused by the signature checks.
    static let trustCodes: Set<Code> = [
        .unsigned, .badSignature, .unknownSigner, .revokedSigner, .tooFewSignatures, .expired, .untrustedKeyList,
    ]
}
