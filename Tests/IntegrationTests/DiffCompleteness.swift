import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport

/// Checks a `folio diff --format json` report of two versions of one published root against
/// the versions themselves: entries added and removed exactly as the manifests differ, and for
/// every entry whose property list differs, the reported changes turn the old value into the new.
struct DiffCompleteness {
    let root: String
    let old: Manifest
    let new: Manifest
    let report: PlistValue

    init(root: String, oldVersion: Int, newVersion: Int, report: PlistValue) throws {
        self.root = root
        old = try Manifest(bytes: try FileIO.read(root + "/manifests/\(oldVersion).plist"))
        new = try Manifest(bytes: try FileIO.read(root + "/manifests/\(newVersion).plist"))
        self.report = report
    }

    /// The paths listed under `key` ("added", "removed", "changed").
    func reported(_ key: String) -> [String] {
        (report[key]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue }
    }

    var addedPaths: Set<String> { Set(new.entries.map(\.path)).subtracting(old.entries.map(\.path)) }
    var removedPaths: Set<String> { Set(old.entries.map(\.path)).subtracting(new.entries.map(\.path)) }

    /// Every property list in both versions with other bytes: its problem, if the reported
    /// changes applied to the old value do not give the new value.
    func valueProblems() throws -> [String] {
        let before = Dictionary(old.entries.map { ($0.path, $0) }, uniquingKeysWith: { x, _ in x })
        var problems: [String] = []
        for e in new.entries {
            guard let o = before[e.path], o.sha256 != e.sha256, o.isPlist, e.isPlist else { continue }
            if let p = try problem(o, e) { problems.append(p) }
        }
        return problems
    }

    func problem(_ o: Manifest.Entry, _ e: Manifest.Entry) throws -> String? {
        let entry = report["changed"]?.arrayValue?.first { $0["path"] == .string(e.path) }
        guard entry?["truncated"] != .bool(true) else { return "\(e.path): truncated" }
        let changes = try (entry?["changes"]?.arrayValue ?? []).map(DiffJSONReader.change)
        let (x, y) = (try value(o), try value(e))
        let applied: PlistValue
        do { applied = try PlistChangeApplier.apply(changes, to: x) } catch {
            return "\(e.path): \(error) applying \(changes)"
        }
        guard applied != y else { return nil }
        return "\(e.path): \(changes.count) changes applied give\n\(Self.brief(applied))\nnot\n\(Self.brief(y))\nchanges: \(Self.brief(entry?["changes"]))"
    }

    /// A value as compact JSON, cut at 1,500 characters.
    static func brief(_ v: PlistValue?) -> String {
        let text = (try? JSONPlist.encode(v ?? .array([]), pretty: false)).map { String(decoding: $0, as: UTF8.self) } ?? "\(String(describing: v))"
        return text.count > 1500 ? text.prefix(1500) + "…" : text
    }

    /// An entry's published value as the JSON output carries values (dates as strings).
    func value(_ e: Manifest.Entry) throws -> PlistValue {
        try DiffJSONReader.asJSON(try PlistValue.decode(try FileIO.read(root + "/" + e.objectPath)))
    }
}
