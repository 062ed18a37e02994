import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// What the last build saw and published, so that a rebuild in which no source, no rule and
/// nothing in the published directory changed can stop after one walk of the content folder,
/// as make does: every source's stamp, the stamps of `manifest.plist` and `objects/`, the
/// settings that shape the output, and the diagnostics it reported (shown again).
package struct LastPublish: Sendable, Equatable {
    /// How many sources there were, and the SHA-256 of their paths and stamps in path order
    /// (``digest(_:)``): one string where 20,000 stamps would be read and written on every build.
    package var sourceCount: Int
    package var sourceDigest: String
    package var manifest: FileStamp
    package var objects: FileStamp
    package var settings: String
    package var version: Int
    package var rawBytes: Int
    package var gzipBytes: Int
    package var diagnostics: [Diagnostic]

    /// The settings a build's output depends on besides its sources and project file.
    package static func settings(_ config: BuildConfiguration) -> String {
        "\(config.developmentLanguage)|\(config.deltaHistory)|\(config.strict)|\(config.notice ?? "")|\(config.maxFileSize)|\(config.minimumAppVersion ?? "")|\(config.maintenanceUntil?.timeIntervalSince1970 ?? 0)|\(config.channel)|\(config.critical)|\(config.release.map { "\($0.rolloutBasisPoints) \($0.conditions)" } ?? "")"
    }

    /// Whether a build of `sources` under `config` would publish nothing new: an unsigned build
    /// (a signature may need renewing), the same settings, the same sources with the same stamps
    /// (none touched in the second the cache was written), and the published directory as left.
    package func isCurrent(_ sources: [SourceFile], _ config: BuildConfiguration, root: String, cache: BuildCache) -> Bool {
        guard config.signing == nil, settings == Self.settings(config), sources.count == sourceCount,
            FileStamp.read(PublishedLayout.path(config.channelDir, PublishedLayout.manifest)) == manifest,
            FileStamp.read(PublishedLayout.path(root, PublishedLayout.objects)) == objects
        else { return false }
        return sources.allSatisfy { cache.trusts($0.stamp) } && Self.digest(sources) == sourceDigest
    }

    /// The SHA-256 of every source's relative path and stamp, in the order given (the walk's path order).
    package static func digest(_ sources: [SourceFile]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sources.count * 64)
        for file in sources {
            bytes += file.relativePath.utf8
            bytes.append(0)
            for n in file.stamp.fields { withUnsafeBytes(of: n.littleEndian) { bytes += $0 } }
        }
        return ContentHash.sha256Hex(bytes)
    }

    /// The summary of a build that stopped here.
    package var result: PublishResult {
        var r = PublishResult(previousVersion: version, version: version, changed: false)
        r.rawBytes = rawBytes
        r.gzipBytes = gzipBytes
        return r
    }

    var plist: PlistValue {
        .dict([
            "sourceCount": .int(Int64(sourceCount)), "sourceDigest": .string(sourceDigest), "manifest": manifest.plist, "objects": objects.plist,
            "settings": .string(settings), "version": .int(Int64(version)), "rawBytes": .int(Int64(rawBytes)),
            "gzipBytes": .int(Int64(gzipBytes)),
            "diagnostics": .array(diagnostics.map { d in
                .array([.string(d.path), .int(Int64(d.line)), .int(Int64(d.column)), .string(d.severity.rawValue), .string(d.message)])
            }),
        ])
    }

    init?(plist value: PlistValue) {
        guard let count = value["sourceCount"]?.intValue, let digest = value["sourceDigest"]?.stringValue, let manifest = value["manifest"].flatMap(FileStamp.init(plist:)),
            let objects = value["objects"].flatMap(FileStamp.init(plist:)), let settings = value["settings"]?.stringValue,
            let version = value["version"]?.intValue, let raw = value["rawBytes"]?.intValue, let gz = value["gzipBytes"]?.intValue,
            let diagnostics = value["diagnostics"]?.arrayValue
        else { return nil }
        var found: [Diagnostic] = []
        for d in diagnostics {
            guard let f = d.arrayValue, f.count == 5, let path = f[0].stringValue, let line = f[1].intValue, let column = f[2].intValue,
                let severity = f[3].stringValue.flatMap(Diagnostic.Severity.init(rawValue:)), let message = f[4].stringValue
            else { return nil }
            found.append(Diagnostic(path: path, line: line, column: column, severity: severity, message: message))
        }
        self.init(
            sourceCount: count, sourceDigest: digest, manifest: manifest, objects: objects, settings: settings, version: version, rawBytes: raw,
            gzipBytes: gz, diagnostics: found)
    }

    package init(
        sourceCount: Int, sourceDigest: String, manifest: FileStamp, objects: FileStamp, settings: String, version: Int, rawBytes: Int,
        gzipBytes: Int, diagnostics: [Diagnostic]
    ) {
        self.sourceCount = sourceCount
        self.sourceDigest = sourceDigest
        self.manifest = manifest
        self.objects = objects
        self.settings = settings
        self.version = version
        self.rawBytes = rawBytes
        self.gzipBytes = gzipBytes
        self.diagnostics = diagnostics
    }
}

extension FileStamp {
    /// `[inode, size, mtime s, mtime ns]`.
    var plist: PlistValue {
        .array([.int(Int64(bitPattern: inode)), .int(size), .int(Int64(mtimeSeconds)), .int(Int64(mtimeNanos))])
    }

    init?(plist: PlistValue) {
        guard let a = plist.arrayValue, a.count == 4, case .int(let inode) = a[0], let size = a[1].intValue,
            let sec = a[2].intValue, let nsec = a[3].intValue
        else { return nil }
        self.init(inode: UInt64(bitPattern: inode), size: Int64(size), mtimeSeconds: sec, mtimeNanos: nsec)
    }
}
