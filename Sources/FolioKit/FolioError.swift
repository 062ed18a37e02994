import FolioPublished

/// An error from FolioKit: what went wrong, where, and whether there is still content to show.
///
/// Like swift-nio's `FileSystemError`, it carries a ``Code`` to branch on, a message that says
/// what to do, the path or URL concerned, the underlying error, and the source location that
/// raised it. Programs choose exit codes from ``code``; the library never exits.
public struct FolioError: Error, CustomStringConvertible, Sendable {
    /// The kinds of failure a caller can tell apart.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// There is nothing to read: no verified cache and no seed.
        case noContent
        /// The version being read has no entry at the path asked for.
        case entryNotFound
        /// A stored object no longer matches its manifest entry (it is fetched again on sync).
        case corruptObject
        /// An entry's bytes are not what the caller asked them to be (plist, catalog, type).
        case invalidContent
        /// The edge could not be reached or kept failing.
        case edgeUnreachable
        /// The edge answered, but with something unusable (status, manifest, object, gzip).
        case invalidResponse
        /// The edge offers an older version than the one held, or (when trusting a root) than the
        /// seed's (a rollback).
        case downgrade
        /// The client trusts a root key and the manifest is not signed.
        case unsigned
        /// A signature does not verify over the manifest's bytes (altered, or signed over others).
        case badSignature
        /// The manifest is signed by a key its key list does not authorize.
        case unknownSigner
        /// The manifest is signed by a key its key list revokes.
        case revokedSigner
        /// The manifest has fewer valid signatures than its key list requires.
        case tooFewSignatures
        /// The signed manifest or its key list has expired (nothing newer has been signed).
        case expired
        /// The key list is not signed by a trusted root key, or is older than one already seen.
        case untrustedKeyList
        /// Another sync holds the cache.
        case busy
        /// Reading or writing the cache directory failed.
        case io
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
    public var isTrustFailure: Bool { TrustError.Kind(rawValue: code.rawValue) != nil }
}
