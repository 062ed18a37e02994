/// The names in a published directory, which are also the edge's URL paths: the one place they
/// are written.
///
/// ```
/// manifest.plist                     the current manifest (the only file that changes)
/// manifest.plist.gz, manifest.json   its gzip variant and JSON mirror
/// keylist.plist                      the root-signed key list (signed publishes)
/// manifests/<version>.plist          every manifest ever published
/// objects/<sha256>.plist[.gz]        content-addressed objects and their gzip variants
/// ```
package enum PublishedLayout {
    /// The current manifest.
    package static let manifest = "manifest.plist"
    /// The current manifest, gzipped.
    package static let manifestGzip = "manifest.plist.gz"
    /// The current manifest as JSON, for people and CI.
    package static let manifestJSON = "manifest.json"
    /// The key list a signed publish is signed under (also carried inside its manifest).
    package static let keyList = "keylist.plist"
    /// The directory of objects.
    package static let objects = "objects"
    /// The directory of versioned manifests.
    package static let manifests = "manifests"

    /// `objects/<sha256>.plist`.
    package static func object(_ sha256: String) -> String { "objects/\(sha256).plist" }
    /// `objects/<sha256>.plist.gz`.
    package static func gzipObject(_ sha256: String) -> String { "objects/\(sha256).plist.gz" }
    /// `manifests/<version>.plist`.
    package static func versionedManifest(_ version: Int) -> String { "manifests/\(version).plist" }
    /// The version a file name under `manifests/` stands for (`12.plist` → 12).
    package static func version(ofManifestFile name: String) -> Int? {
        name.hasSuffix(".plist") ? Int(name.dropLast(6)) : nil
    }

    /// `root/relative`.
    package static func path(_ root: String, _ relative: String) -> String { root + "/" + relative }
}

/// How bytes compare with a manifest entry.
package enum ObjectCheck: Equatable, Sendable {
    /// Size and SHA-256 match.
    case matches
    /// The size differs (the actual size).
    case wrongSize(Int)
    /// The size matches and the hash does not (the actual hex SHA-256).
    case wrongHash(String)
}
