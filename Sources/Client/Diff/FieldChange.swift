import FolioPlist
import FolioPublished
import Foundation

/// A manifest field that differs, with its label in words and whether it is a difference a
/// client acts on (exit 1): notice, minimum app version, maintenance, critical, cache hints.
struct FieldChange {
    /// The manifest key (`notice`, `cacheHints.object`, …).
    var field: String
    var label: String
    var old: PlistValue?
    var new: PlistValue?
    var significant: Bool

    /// Every manifest field but `version`, `createdAt`, `entries` and `releases` (compared on their own).
    static func compare(_ a: Manifest, _ b: Manifest) -> [FieldChange] {
        var out: [FieldChange] = []
        func add(_ field: String, _ label: String, _ x: PlistValue?, _ y: PlistValue?, significant: Bool) {
            if x != y { out.append(FieldChange(field: field, label: label, old: x, new: y, significant: significant)) }
        }
        add("notice", "notice", a.notice.map(PlistValue.string), b.notice.map(PlistValue.string), significant: true)
        add("minimumAppVersion", "minimum app version", a.minimumAppVersion.map(PlistValue.string), b.minimumAppVersion.map(PlistValue.string), significant: true)
        add("maintenanceUntil", "maintenance until", a.maintenanceUntil.map(PlistValue.date), b.maintenanceUntil.map(PlistValue.date), significant: true)
        add("critical", "critical", .bool(a.critical), .bool(b.critical), significant: true)
        for kind in Set(a.cacheHints.keys).union(b.cacheHints.keys).sorted() {
            add("cacheHints.\(kind)", "cache policy for \(kind)", a.cacheHints[kind].map(\.plist), b.cacheHints[kind].map(\.plist), significant: true)
        }
        add("channel", "channel", .string(a.channelName), .string(b.channelName), significant: false)
        add("expiresAt", "expires at", a.expiresAt.map(PlistValue.date), b.expiresAt.map(PlistValue.date), significant: false)
        add("history", "publish history", a.history.map(PlistValue.string), b.history.map(PlistValue.string), significant: false)
        add("sourceRevision", "source revision", a.sourceRevision.map(PlistValue.string), b.sourceRevision.map(PlistValue.string), significant: false)
        add("schemaVersion", "schema version", .int(Int64(a.schemaVersion)), .int(Int64(b.schemaVersion)), significant: false)
        return out
    }

    /// The change in words: `notice: none → "Maintenance tonight"`.
    var words: String {
        if field.hasPrefix("cacheHints.") {
            return "\(label): \(Self.cacheControl(old)) → \(Self.cacheControl(new))"
        }
        return "\(label): \(ValueText.short(old)) → \(ValueText.short(new))"
    }

    static func cacheControl(_ v: PlistValue?) -> String {
        guard let v, let hint = try? Manifest.CacheHint(plist: v, at: "") else { return "none" }
        return hint.cacheControl
    }
}
