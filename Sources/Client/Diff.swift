import ArgumentParser
import AsyncHTTPClient
import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation
import NIOCore

/// One side of a diff: a manifest and a way to get its objects.
struct DiffSide {
    var label: String
    var manifest: Manifest
    /// The signature, when the side is a signed manifest (not verified: diff compares).
    var signed: SignedManifest? = nil
    /// The release applied (`+N`): the side is one install's view, with no releases to compare.
    var appliedRelease: Int? = nil
    var load: (Manifest.Entry) async throws -> [UInt8]

    /// Resolves `spec`: a published directory, a manifest file, an edge URL, or `@N`, each
    /// optionally followed by `#CHANNEL` (a bare `#CHANNEL` is the edge's) and `+N` (as the
    /// installs in release N of that manifest see it).
    static func resolve(_ spec: String, options: ClientOptions) async throws -> DiffSide {
        let target = try DiffTarget(spec, edge: options.edgeURL)
        var side = try await resolve(target.base, channel: target.channel, options: options)
        if target.channel != Channel.production { side.label += " channel \(target.channel)" }
        guard let release = target.release else { return side }
        guard side.manifest.release(release) != nil else {
            let ids = side.manifest.releases.map { String($0.id) }
            throw CLIError(
                "'\(spec)': version \(side.manifest.version) has no release \(release)" + (ids.isEmpty ? " (it has none)" : "; it has \(ids.joined(separator: ", "))"),
                exitCode: 2)
        }
        side.manifest = side.manifest.applying(release: release)
        side.appliedRelease = release
        side.label += " release \(release)"
        return side
    }

    /// One side without its release: `spec` in `channel`.
    static func resolve(_ spec: String, channel: String, options: ClientOptions) async throws -> DiffSide {
        let cache = ContentCache(dir: options.cachePath, edge: options.edgeURL, channel: channel)
        let prefix = PublishedLayout.channelPrefix(channel)
        if spec.hasPrefix("@") {
            guard let n = Int(spec.dropFirst()), n >= 1 else { throw CLIError("'\(spec)': @N needs a version number, like @3", exitCode: 2) }
            if let (m, bytes) = cache.manifestFile(version: n), m.channelName == channel {
                return DiffSide(label: "version \(n) (cache)", manifest: m, signed: try? SignedManifest.decode(bytes)) { e in
                    if let bytes = try? cache.object(e) { return bytes }
                    return try await fetch(options.edgeURL, e.objectPath, verify: e)
                }
            }
            let bytes = try await fetchBytes(options.edgeURL, prefix + PublishedLayout.versionedManifest(n))
            let m = try parseManifest(bytes, from: options.edgeURL + "/" + prefix + PublishedLayout.versionedManifest(n))
            return DiffSide(label: "version \(n) (\(options.edgeURL))", manifest: m, signed: try? SignedManifest.decode(bytes)) { e in
                try await fetch(options.edgeURL, e.objectPath, verify: e)
            }
        }
        if spec.hasPrefix("http://") || spec.hasPrefix("https://") {
            var base = spec
            while base.hasSuffix("/") { base.removeLast() }
            let suffix = "/" + PublishedLayout.manifest
            if base.hasSuffix(suffix) { base.removeLast(suffix.count) }
            let bytes = try await fetchBytes(base, prefix + PublishedLayout.manifest)
            let m = try parseManifest(bytes, from: base + suffix)
            return DiffSide(label: "\(base) (version \(m.version))", manifest: m, signed: try? SignedManifest.decode(bytes)) { e in
                try await fetch(base, e.objectPath, verify: e)
            }
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: spec, isDirectory: &isDir) else {
            throw CLIError("'\(spec)' is not a published directory, a manifest file, an edge URL or @N", exitCode: 2)
        }
        let root: String
        let manifestPath: String
        if isDir.boolValue {
            root = FileIO.lastComponent(of: FileIO.parent(of: spec)) == PublishedLayout.channels ? FileIO.parent(of: FileIO.parent(of: spec)) : spec
            manifestPath = PublishedLayout.channelManifest(spec, channel)
        } else {
            manifestPath = spec
            // The published directory holding the manifest ("." for a bare file name).
            let parent = FileIO.parent(of: spec).isEmpty ? "." : FileIO.parent(of: spec)
            root = Self.publishedRoot(ofManifestDirectory: parent)
        }
        if isDir.boolValue, channel != Channel.production, !FileIO.exists(manifestPath) {
            let held = PublishedLayout.publishedChannels(spec).joined(separator: ", ")
            throw CLIError("\(spec) has no channel \(channel)" + (held.isEmpty ? "" : "; it has \(held)"), exitCode: 2)
        }
        let bytes: [UInt8]
        do { bytes = try FileIO.read(manifestPath) } catch { throw CLIError("\(error)", exitCode: 2) }
        let m = try parseManifest(bytes, from: manifestPath)
        return DiffSide(label: "\(spec) (version \(m.version))", manifest: m, signed: try? SignedManifest.decode(bytes)) { e in
            let path = (root.isEmpty ? "." : root) + "/" + e.objectPath
            if let bytes = try? FileIO.read(path), e.matches(bytes) { return bytes }
            if let bytes = try? cache.object(e) { return bytes }
            throw CLIError("the object for \(e.path) (\(e.sha256)) is neither in \(root)/objects nor in the cache", exitCode: 2)
        }
    }

    /// The published root above a manifest file's directory: past `manifests/` and `channels/NAME/`.
    static func publishedRoot(ofManifestDirectory dir: String) -> String {
        var root = FileIO.lastComponent(of: dir) == PublishedLayout.manifests ? FileIO.parent(of: dir) : dir
        let up = FileIO.parent(of: root)
        if FileIO.lastComponent(of: up) == PublishedLayout.channels { root = FileIO.parent(of: up) }
        return root
    }

    static func parseManifest(_ bytes: [UInt8], from: String) throws -> Manifest {
        do { return try Manifest(bytes: bytes) } catch { throw CLIError("\(from): \(error)", exitCode: 2) }
    }

    /// `path` from the edge at `base`, through the sync's transport (and its prefix handling).
    static func fetchBytes(_ base: String, _ path: String) async throws -> [UInt8] {
        let url = base + "/" + path
        do {
            let response = try await Transports.forEdge(base).get(TransportRequest(path: "/" + path, headers: [], maxBody: 64 << 20))
            guard response.status == 200 else { throw CLIError("GET \(url) answered \(response.status)", exitCode: 2) }
            return response.body
        } catch let e as TransportError {
            throw CLIError("GET \(url) failed: \(e)", exitCode: 2)
        }
    }

    static func fetch(_ base: String, _ path: String, verify e: Manifest.Entry) async throws -> [UInt8] {
        let bytes = try await fetchBytes(base, path)
        guard e.matches(bytes) else {
            throw CLIError("\(base)/\(path) does not match its manifest entry \(e.path)", exitCode: 2)
        }
        return bytes
    }
}

/// A diff side as written: the base spec, its channel (`#beta`) and release (`+3`).
struct DiffTarget {
    var base: String
    var channel = Channel.production
    var release: Int?

    init(_ spec: String, edge: String) throws {
        var text = Substring(spec)
        if let plus = text.lastIndex(of: "+"), let n = Int(text[text.index(after: plus)...]) {
            guard n >= 1 else { throw CLIError("'\(spec)': +N names a release by its id, 1 or more", exitCode: 2) }
            release = n
            text = text[..<plus]
        }
        if let hash = text.lastIndex(of: "#") {
            let name = String(text[text.index(after: hash)...])
            guard Channel.isValidName(name) else { throw CLIError("'\(spec)': \(Channel.problem(name))", exitCode: 2) }
            channel = name
            text = text[..<hash]
        }
        base = text.isEmpty ? edge : String(text)
    }
}

/// The differences between two versions.
struct ContentDiff {
    struct Change {
        var keyPath: String
        var old: PlistValue?
        var new: PlistValue?
    }

    struct Changed {
        var path: String
        var oldSHA: String
        var newSHA: String
        var changes: [Change]
        var truncated: Bool
        /// For sonnets: a line diff (" ", "-", "+" prefixed lines).
        var lineDiff: [String]?
        /// For assets: compared by their manifest entries, not their bytes.
        var asset: AssetChange? = nil
    }

    /// What changed in an asset: its (new) content type and its sizes.
    struct AssetChange {
        var contentType: String
        var oldSize: Int
        var newSize: Int
    }

    var from: (label: String, version: Int)
    var to: (label: String, version: Int)
    var added: [Manifest.Entry] = []
    var removed: [Manifest.Entry] = []
    var changed: [Changed] = []
    /// Changes of signature: who signed, and the key list (shown; not content differences).
    var signing: [Change] = []
    /// Releases added, removed or changed (share, halt, audience, entries), by id.
    var releases: [(id: Int, old: String?, new: String?)] = []

    var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty && releases.isEmpty }

    /// The releases of two manifests that differ.
    static func releaseChanges(_ a: Manifest, _ b: Manifest) -> [(id: Int, old: String?, new: String?)] {
        let old = Dictionary(a.releases.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        let new = Dictionary(b.releases.map { ($0.id, $0) }, uniquingKeysWith: { x, _ in x })
        return Set(old.keys).union(new.keys).sorted().compactMap { id in
            old[id] == new[id] ? nil : (id, old[id]?.summary, new[id]?.summary)
        }
    }

    static let maxChangesPerEntry = 200

    static func compute(_ a: DiffSide, _ b: DiffSide) async throws -> ContentDiff {
        var diff = ContentDiff(from: (a.label, a.manifest.version), to: (b.label, b.manifest.version))
        var truncated = false
        walk(a.signed?.summary ?? .string("unsigned"), b.signed?.summary ?? .string("unsigned"), "signing", into: &diff.signing, truncated: &truncated)
        let old = Dictionary(uniqueKeysWithValues: a.manifest.entries.map { ($0.path, $0) })
        let new = Dictionary(uniqueKeysWithValues: b.manifest.entries.map { ($0.path, $0) })
        diff.added = b.manifest.entries.filter { old[$0.path] == nil }
        diff.removed = a.manifest.entries.filter { new[$0.path] == nil }
        if a.appliedRelease == nil, b.appliedRelease == nil { diff.releases = releaseChanges(a.manifest, b.manifest) }
        for e in b.manifest.entries {
            guard let o = old[e.path], o != e else { continue }
            if o.sha256 == e.sha256 {
                // Same bytes, other metadata (a new cache policy, kind or content type).
                var c = Changed(path: e.path, oldSHA: o.sha256, newSHA: e.sha256, changes: metadata(o, e), truncated: false, lineDiff: nil)
                if !e.isPlist { c.asset = AssetChange(contentType: e.contentType, oldSize: o.size, newSize: e.size) }
                if !c.changes.isEmpty { diff.changed.append(c) }
            } else if o.isPlist, e.isPlist {
                var c = try await structured(o, e, a, b)
                c.changes = metadata(o, e) + c.changes
                diff.changed.append(c)
            } else {
                diff.changed.append(asset(o, e))
            }
        }
        return diff
    }

    /// Changes of an entry's manifest metadata: content type, kind, cache policy.
    static func metadata(_ o: Manifest.Entry, _ e: Manifest.Entry) -> [Change] {
        var changes: [Change] = []
        if o.contentType != e.contentType {
            changes.append(Change(keyPath: "(content type)", old: .string(o.contentType), new: .string(e.contentType)))
        }
        if o.kind != e.kind { changes.append(Change(keyPath: "(kind)", old: o.kind.map { .string($0) }, new: e.kind.map { .string($0) })) }
        if o.cache != e.cache {
            changes.append(Change(keyPath: "(cache)", old: o.cache.map { .string($0.cacheControl) }, new: e.cache.map { .string($0.cacheControl) }))
        }
        return changes
    }

    /// A structured entry's value-level changes (and a line diff for sonnets).
    static func structured(_ o: Manifest.Entry, _ e: Manifest.Entry, _ a: DiffSide, _ b: DiffSide) async throws -> Changed {
        let before = try await a.load(o)
        let after = try await b.load(e)
        var changes: [Change] = []
        var truncated = false
        var lineDiff: [String]?
        if let x = try? BinaryPlist.decode(before), let y = try? BinaryPlist.decode(after) {
            walk(x, y, "", into: &changes, truncated: &truncated)
            if let l1 = x["lines"]?.arrayValue?.compactMap(\.stringValue), let l2 = y["lines"]?.arrayValue?.compactMap(\.stringValue) {
                lineDiff = LineDiff.diff(l1, l2)
            }
        } else {
            changes.append(Change(keyPath: "(bytes)", old: .string("\(before.count) bytes"), new: .string("\(after.count) bytes")))
        }
        return Changed(path: e.path, oldSHA: o.sha256, newSHA: e.sha256, changes: changes, truncated: truncated, lineDiff: lineDiff)
    }

    /// An asset's (or a kind change's) changes from the manifests alone: content type, size and
    /// SHA-256; its bytes are not fetched.
    static func asset(_ o: Manifest.Entry, _ e: Manifest.Entry) -> Changed {
        var changes = metadata(o, e)
        if o.size != e.size { changes.append(Change(keyPath: "(size)", old: .int(Int64(o.size)), new: .int(Int64(e.size)))) }
        changes.append(Change(keyPath: "(sha256)", old: .string(o.sha256), new: .string(e.sha256)))
        var c = Changed(path: e.path, oldSHA: o.sha256, newSHA: e.sha256, changes: changes, truncated: false, lineDiff: nil)
        c.asset = AssetChange(contentType: e.contentType, oldSize: o.size, newSize: e.size)
        return c
    }

    /// Records every differing key path (`lines[3]`, `entries[2].sha256`, …).
    static func walk(_ a: PlistValue?, _ b: PlistValue?, _ path: String, into out: inout [Change], truncated: inout Bool) {
        guard out.count < maxChangesPerEntry else {
            truncated = true
            return
        }
        if a == b { return }
        switch (a, b) {
        case (.dict(let x)?, .dict(let y)?):
            for key in Set(x.keys).union(y.keys).sorted() {
                walk(x[key], y[key], path.isEmpty ? key : path + "." + key, into: &out, truncated: &truncated)
            }
        case (.array(let x)?, .array(let y)?):
            for i in 0..<max(x.count, y.count) {
                walk(i < x.count ? x[i] : nil, i < y.count ? y[i] : nil, "\(path)[\(i)]", into: &out, truncated: &truncated)
            }
        default:
            out.append(Change(keyPath: path.isEmpty ? "(root)" : path, old: a, new: b))
        }
    }

    static func short(_ v: PlistValue?) -> String {
        guard let v else { return "(none)" }
        switch v {
        case .string(let s): return String(reflecting: s)
        case .int(let i): return String(i)
        case .uint(let u): return String(u)
        case .bool(let b): return String(b)
        case .real(let r): return String(r)
        case .date(let d): return PlistDates.formatISO8601(d)
        case .data(let d): return "<\(d.count) bytes>"
        case .uid(let u): return "UID(\(u))"
        case .array(let a): return "[\(a.count) items]"
        case .set(let a): return "{\(a.count) items}"
        case .dict(let d): return "{\(d.count) keys}"
        }
    }

    // MARK: Rendering

    var summary: String {
        "\(added.count) added, \(removed.count) removed, \(changed.count) changed" + (releases.isEmpty ? "" : ", \(releases.count) releases changed")
    }

    func text() -> String {
        var out = "folio diff: \(from.label) → \(to.label): " + (isEmpty ? "no differences" : summary) + "\n"
        for ch in signing { out += "! \(ch.keyPath): \(Self.short(ch.old)) → \(Self.short(ch.new))\n" }
        for r in releases { out += "r release \(r.id): \(r.old ?? "none") → \(r.new ?? "none")\n" }
        for e in added { out += "+ \(e.path)\n" }
        for e in removed { out += "- \(e.path)\n" }
        for c in changed {
            out += "~ \(c.path)" + (c.asset.map { " (asset, \($0.contentType))" } ?? "") + "\n"
            if let lines = c.lineDiff {
                for ch in c.changes where ch.keyPath.hasPrefix("(") { out += "    \(ch.keyPath): \(Self.short(ch.old)) → \(Self.short(ch.new))\n" }
                for l in lines { out += "    \(l)\n" }
            } else {
                for ch in c.changes { out += "    \(ch.keyPath): \(Self.short(ch.old)) → \(Self.short(ch.new))\n" }
                if c.truncated { out += "    … more changes not shown\n" }
            }
        }
        return out
    }

    static let markdownLimit = 60_000

    func markdown() -> String {
        var head = "### Folio content diff\n\n`\(from.label)` → `\(to.label)`\n\n"
        head += "| | entries |\n|---|---:|\n| added | \(added.count) |\n| removed | \(removed.count) |\n| changed | \(changed.count) |\n\n"
        if !signing.isEmpty {
            head += "**Signing changed:**\n\n| | before | after |\n|---|---|---|\n"
            for ch in signing { head += "| `\(ch.keyPath)` | \(Self.cell(Self.short(ch.old))) | \(Self.cell(Self.short(ch.new))) |\n" }
            head += "\n"
        }
        if isEmpty { return head + "No differences.\n" }
        var blocks: [String] = []
        if !releases.isEmpty {
            blocks.append("**Releases:**\n\n| release | before | after |\n|---|---|---|\n"
                + releases.map { "| \($0.id) | \(Self.cell($0.old ?? "none")) | \(Self.cell($0.new ?? "none")) |\n" }.joined() + "\n")
        }
        if !added.isEmpty { blocks.append("**Added:** " + added.map { "`\($0.path)`" }.joined(separator: ", ") + "\n\n") }
        if !removed.isEmpty { blocks.append("**Removed:** " + removed.map { "`\($0.path)`" }.joined(separator: ", ") + "\n\n") }
        for c in changed {
            var b = "<details><summary><code>\(c.path)</code>" + (c.asset.map { " (asset, \($0.contentType))" } ?? "") + "</summary>\n\n"
            if let lines = c.lineDiff {
                for ch in c.changes where ch.keyPath.hasPrefix("(") {
                    b += "- `\(ch.keyPath)`: \(Self.short(ch.old)) → \(Self.short(ch.new))\n\n"
                }
                b += "```diff\n" + lines.joined(separator: "\n") + "\n```\n"
            } else {
                b += "| key path | before | after |\n|---|---|---|\n"
                for ch in c.changes {
                    b += "| `\(ch.keyPath)` | \(Self.cell(Self.short(ch.old))) | \(Self.cell(Self.short(ch.new))) |\n"
                }
                if c.truncated { b += "\n…more changes not shown.\n" }
            }
            b += "\n</details>\n\n"
            blocks.append(b)
        }
        var out = head
        func note(_ remaining: Int) -> String {
            "\n> \(remaining) more section(s) not shown: output capped at \(Self.markdownLimit) characters; run `folio diff` locally for the rest.\n"
        }
        let reserve = note(blocks.count).count  // the longest note there can be
        for (i, b) in blocks.enumerated() {
            let isLast = i == blocks.count - 1
            if out.count + b.count + (isLast ? 0 : reserve) > Self.markdownLimit {
                return out + note(blocks.count - i)
            }
            out += b
        }
        return out
    }

    private static func cell(_ s: String) -> String {
        s.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }

    func json() -> PlistValue {
        func entry(_ e: Manifest.Entry) -> PlistValue {
            var d: [String: PlistValue] = [
                "path": .string(e.path), "sha256": .string(e.sha256), "size": .int(Int64(e.size)), "contentType": .string(e.contentType),
            ]
            if let kind = e.kind { d["kind"] = .string(kind) }
            return .dict(d)
        }
        return .dict([
            "from": .dict(["label": .string(from.label), "version": .int(Int64(from.version))]),
            "to": .dict(["label": .string(to.label), "version": .int(Int64(to.version))]),
            "equal": .bool(isEmpty),
            "signing": .array(signing.map { ch in
                .dict(["keyPath": .string(ch.keyPath), "old": .string(Self.short(ch.old)), "new": .string(Self.short(ch.new))])
            }),
            "releases": .array(releases.map { r in
                var d: [String: PlistValue] = ["id": .int(Int64(r.id))]
                (d["old"], d["new"]) = (r.old.map { .string($0) }, r.new.map { .string($0) })
                return .dict(d)
            }),
            "added": .array(added.map(entry)),
            "removed": .array(removed.map(entry)),
            "changed": .array(changed.map { c in
                var d: [String: PlistValue] = [
                    "path": .string(c.path), "oldSHA256": .string(c.oldSHA), "newSHA256": .string(c.newSHA),
                    "changes": .array(c.changes.map { ch in
                        .dict(["keyPath": .string(ch.keyPath), "old": .string(Self.short(ch.old)), "new": .string(Self.short(ch.new))])
                    }),
                    "truncated": .bool(c.truncated),
                ]
                if let l = c.lineDiff { d["lineDiff"] = .array(l.map { .string($0) }) }
                if let asset = c.asset {
                    d["kind"] = .string("asset")
                    d["contentType"] = .string(asset.contentType)
                    d["oldSize"] = .int(Int64(asset.oldSize))
                    d["newSize"] = .int(Int64(asset.newSize))
                }
                return .dict(d)
            }),
        ])
    }
}

/// A line diff by longest common subsequence: lines prefixed "  ", "- " or "+ ".
enum LineDiff {
    static func diff(_ a: [String], _ b: [String]) -> [String] {
        let n = a.count
        let m = b.count
        var lcs = [[Int]](repeating: [Int](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        var out: [String] = []
        var i = 0
        var j = 0
        while i < n || j < m {
            if i < n, j < m, a[i] == b[j] {
                out.append("  " + a[i]); i += 1; j += 1
            } else if i < n, j == m || lcs[i + 1][j] >= lcs[i][j + 1] {
                out.append("- " + a[i]); i += 1
            } else {
                out.append("+ " + b[j]); j += 1
            }
        }
        return out
    }
}

/// `folio diff A B`
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two versions: exit 0 when equal, 1 when different, 2 on error.",
        discussion: """
            Each side is a published directory, a manifest file, an edge URL, or @N (version N from the cache or the edge's \
            history). Add #CHANNEL for another channel than production (a bare #beta is the edge's beta channel) and +N for \
            the content the installs in release N see: public#beta, https://edge.example#beta+12, @7+7.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, markdown, json }

    @OptionGroup var options: ClientOptions
    @Argument(help: "The old side.") var a: String
    @Argument(help: "The new side.") var b: String
    @Option(help: "text, markdown (for a pull request) or json.") var format: Format = .text

    func run() async throws {
        let diff: ContentDiff
        do {
            diff = try await ContentDiff.compute(try await DiffSide.resolve(a, options: options), try await DiffSide.resolve(b, options: options))
        } catch let e as CLIError {
            throw CLIError(e.description, exitCode: 2)
        }
        switch format {
        case .text: print(diff.text(), terminator: "")
        case .markdown: print(diff.markdown(), terminator: "")
        case .json: FileHandle.standardOutput.write(Data(try JSONPlist.encode(diff.json())))
        }
        if !diff.isEmpty { throw ExitCode(1) }
    }
}
