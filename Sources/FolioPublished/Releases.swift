import FolioPlist
import FolioSupport
import Foundation

/// A release inside a channel's signed manifest, beside its default entries: a staged rollout
/// to a share of installs, a release for some apps only (targeting), or both. Clients choose
/// one by themselves (``Manifest/chooseRelease(installID:context:)``), so every edge and cache
/// serves the same bytes to everyone.
package struct Release: Sendable, Equatable {
    /// The version that published it; with the manifest's history, what an install's bucket is
    /// drawn from, so raising its share keeps the installs it had.
    package var id: Int
    /// The share of matching installs it reaches, in hundredths of a percent (10000: all).
    package var rolloutBasisPoints: Int
    /// Reaches nobody until resumed (`folio-build release halt`); its share is kept.
    package var halted = false
    /// Every condition must hold for an install to be considered; none: every install.
    package var conditions: [ReleaseCondition] = []
    /// The app should apply it at once (FolioKit reports it).
    package var critical = false
    /// The oldest app version it is for.
    package var minimumAppVersion: String?
    /// Entries it changes or adds to the default, sorted by path.
    package var entries: [Manifest.Entry]
    /// Default paths it removes, sorted.
    package var removed: [String] = []

    package init(id: Int, rolloutBasisPoints: Int, conditions: [ReleaseCondition] = [], entries: [Manifest.Entry], removed: [String] = []) {
        self.id = id
        self.rolloutBasisPoints = rolloutBasisPoints
        self.conditions = conditions
        self.entries = entries.sorted { $0.path < $1.path }
        self.removed = removed.sorted()
    }

    /// The release that turns `base` into `target`: the entries that differ or are new, and
    /// the paths `target` lacks.
    package init(id: Int, rolloutBasisPoints: Int, conditions: [ReleaseCondition], from base: [Manifest.Entry], to target: [Manifest.Entry]) {
        let old = Dictionary(base.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        let kept = Set(target.map(\.path))
        self.init(
            id: id, rolloutBasisPoints: rolloutBasisPoints, conditions: conditions,
            entries: target.filter { old[$0.path] != $0 }, removed: base.map(\.path).filter { !kept.contains($0) })
    }

    /// The release in words: `10% (halted), when platform=ios, critical, 3 entries changed or added, 1 removed`.
    package var summary: String {
        var parts = ["\(percentText)\(halted ? " (halted)" : "")"]
        if !conditions.isEmpty { parts.append("when " + conditions.map(\.description).joined(separator: " and ")) }
        if critical { parts.append("critical") }
        if let v = minimumAppVersion { parts.append("app \(v) or later") }
        parts.append("\(entries.count) entries changed or added, \(removed.count) removed")
        return parts.joined(separator: ", ")
    }

    /// The share as people write it: `10%`, `2.5%`.
    package var percentText: String { Self.percentText(rolloutBasisPoints) }

    package static func percentText(_ basisPoints: Int) -> String {
        basisPoints % 100 == 0 ? "\(basisPoints / 100)%" : String(format: "%.2f%%", Double(basisPoints) / 100)
    }

    /// `10`, `2.5`, `0.25` → basis points; nil outside 0–100 or finer than 0.01.
    package static func basisPoints(percent text: String) -> Int? {
        let t = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let value = Double(t), value >= 0, value <= 100, t.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 46 }) else { return nil }
        let bp = (value * 100).rounded()
        guard abs(bp - value * 100) < 1e-6 else { return nil }
        return Int(bp)
    }

    /// Whether it targets the same apps as another (a new release for the same audience
    /// replaces the old one).
    package func sameAudience(as other: Release) -> Bool { conditions == other.conditions }

    /// The entries of `defaults` with this release applied, sorted by path.
    package func apply(to defaults: [Manifest.Entry]) -> [Manifest.Entry] {
        let gone = Set(removed)
        var byPath = [String: Manifest.Entry](minimumCapacity: defaults.count + entries.count)
        for e in defaults where !gone.contains(e.path) { byPath[e.path] = e }
        for e in entries { byPath[e.path] = e }
        return byPath.values.sorted { $0.path < $1.path }
    }

    var plist: PlistValue {
        var d: [String: PlistValue] = [
            "id": .int(Int64(id)), "rolloutBasisPoints": .int(Int64(rolloutBasisPoints)),
            "entries": .array(entries.map(\.plist)),
        ]
        if halted { d["halted"] = .bool(true) }
        if critical { d["critical"] = .bool(true) }
        if !conditions.isEmpty { d["conditions"] = .array(conditions.map(\.plist)) }
        if let minimumAppVersion { d["minimumAppVersion"] = .string(minimumAppVersion) }
        if !removed.isEmpty { d["removed"] = .array(removed.map { .string($0) }) }
        return .dict(d)
    }

    init(plist value: PlistValue, at: String) throws(ManifestError) {
        guard case .dict(let d) = value else { throw ManifestError("\(at) is not a dictionary") }
        guard let id = d["id"]?.intValue, id >= 1 else { throw ManifestError("\(at).id is not a version number") }
        guard let bp = d["rolloutBasisPoints"]?.intValue, (0...10_000).contains(bp) else {
            throw ManifestError("\(at).rolloutBasisPoints is not 0 to 10000")
        }
        guard let list = d["entries"]?.arrayValue else { throw ManifestError("\(at) has no entries array") }
        var entries: [Manifest.Entry] = []
        for (i, item) in list.enumerated() { entries.append(try Manifest.Entry(plist: item, at: "\(at).entries[\(i)]")) }
        var removed: [String] = []
        for (i, item) in (d["removed"]?.arrayValue ?? []).enumerated() {
            guard let path = item.stringValue, Manifest.isValidPath(path) else { throw ManifestError("\(at).removed[\(i)] is not a clean relative path") }
            removed.append(path)
        }
        var conditions: [ReleaseCondition] = []
        for (i, item) in (d["conditions"]?.arrayValue ?? []).enumerated() {
            conditions.append(try ReleaseCondition(plist: item, at: "\(at).conditions[\(i)]"))
        }
        self.init(id: id, rolloutBasisPoints: bp, conditions: conditions, entries: entries, removed: removed)
        for i in self.entries.indices.dropFirst() where self.entries[i].path == self.entries[i - 1].path {
            throw ManifestError("\(at) lists \"\(self.entries[i].path)\" twice")
        }
        halted = d["halted"]?.boolValue ?? false
        critical = d["critical"]?.boolValue ?? false
        minimumAppVersion = try Manifest.appVersion(d["minimumAppVersion"], at: at + ".minimumAppVersion")
    }
}

/// What an app says about itself, which releases are targeted by. Unknown fields match no
/// condition on them.
package struct ReleaseContext: Sendable, Equatable {
    package var appVersion: String?
    package var platform: String?
    package var osVersion: String?
    package var locale: String?
    package var country: String?

    package init(appVersion: String? = nil, platform: String? = nil, osVersion: String? = nil, locale: String? = nil, country: String? = nil) {
        self.appVersion = appVersion
        self.platform = platform
        self.osVersion = osVersion
        self.locale = locale
        self.country = country
    }
}

/// One targeting condition: a field of the app's context, an operator and values
/// (`app-version>=3.2`, `platform=ios,android`, `locale!=fr`, `country=FR,BE`).
package struct ReleaseCondition: Sendable, Equatable, CustomStringConvertible {
    package enum Field: String, Sendable, CaseIterable {
        case appVersion = "app-version", osVersion = "os-version", platform, locale, country

        var isVersion: Bool { self == .appVersion || self == .osVersion }
    }

    package enum Operator: String, Sendable, CaseIterable {
        // Two-character operators first, so that parsing finds `>=` before `>`.
        case greaterOrEqual = ">=", lessOrEqual = "<=", notEqual = "!=", equal = "=", greater = ">", less = "<"

        var isOrdering: Bool { ![.equal, .notEqual].contains(self) }
    }

    package var field: Field
    package var op: Operator
    package var values: [String]

    package var description: String { field.rawValue + op.rawValue + values.joined(separator: ",") }

    /// Parses `field op values`; the error says what is wrong and what is accepted.
    package init(parsing text: String) throws(ManifestError) {
        let fields = Field.allCases.map(\.rawValue).joined(separator: ", ")
        guard let field = Field.allCases.first(where: { text.hasPrefix($0.rawValue) }) else {
            throw ManifestError("'\(text)' does not start with a field: one of \(fields), like app-version>=3.2 or platform=ios")
        }
        let rest = text.dropFirst(field.rawValue.count)
        guard let op = Operator.allCases.first(where: { rest.hasPrefix($0.rawValue) }) else {
            throw ManifestError("'\(text)': after \(field.rawValue) comes an operator (=, !=, <, <=, >, >=) and a value")
        }
        let values = rest.dropFirst(op.rawValue.count).split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        try self.init(field: field, op: op, values: values, at: "'\(text)'")
    }

    package init(field: Field, op: Operator, values: [String], at: String) throws(ManifestError) {
        guard !values.isEmpty, values.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
            throw ManifestError("\(at): give one or more values after the operator, separated by commas")
        }
        if op.isOrdering {
            guard field.isVersion else { throw ManifestError("\(at): \(field.rawValue) takes = or != (only versions are ordered)") }
            guard values.count == 1 else { throw ManifestError("\(at): \(op.rawValue) takes one version") }
        }
        if field.isVersion, let bad = values.first(where: { AppVersion($0) == nil }) {
            throw ManifestError("\(at): \(AppVersion.problem(bad))")
        }
        self.field = field
        self.op = op
        self.values = values
    }

    var plist: PlistValue {
        .dict(["field": .string(field.rawValue), "op": .string(op.rawValue), "values": .array(values.map { .string($0) })])
    }

    init(plist value: PlistValue, at: String) throws(ManifestError) {
        guard let f = value["field"]?.stringValue, let field = Field(rawValue: f) else { throw ManifestError("\(at).field is not a known field") }
        guard let o = value["op"]?.stringValue, let op = Operator(rawValue: o) else { throw ManifestError("\(at).op is not a known operator") }
        let values = (value["values"]?.arrayValue ?? []).compactMap(\.stringValue)
        try self.init(field: field, op: op, values: values, at: at)
    }

    /// The context's value for the field, if it gave one.
    private func value(in context: ReleaseContext) -> String? {
        switch field {
        case .appVersion: context.appVersion
        case .osVersion: context.osVersion
        case .platform: context.platform
        case .locale: context.locale
        case .country: context.country
        }
    }

    /// Whether the context satisfies it; nil (no match) when the context lacks the field.
    package func matches(_ context: ReleaseContext) -> Bool {
        guard let actual = value(in: context) else { return false }
        if field.isVersion {
            guard let have = AppVersion(actual) else { return false }
            let wanted = values.compactMap(AppVersion.init)
            switch op {
            case .equal: return wanted.contains(have)
            case .notEqual: return !wanted.contains(have)
            case .less: return have < wanted[0]
            case .lessOrEqual: return have <= wanted[0]
            case .greater: return have > wanted[0]
            case .greaterOrEqual: return have >= wanted[0]
            }
        }
        let hit = values.contains { Self.same(field, actual, $0) }
        return op == .equal ? hit : !hit
    }

    /// Platforms and countries compare case-insensitively; a locale condition `fr` also takes
    /// `fr-CA` (a language range, RFC 4647 basic filtering).
    private static func same(_ field: Field, _ actual: String, _ wanted: String) -> Bool {
        let a = actual.lowercased().replacingOccurrences(of: "_", with: "-")
        let w = wanted.lowercased().replacingOccurrences(of: "_", with: "-")
        return field == .locale ? (a == w || a.hasPrefix(w + "-")) : a == w
    }

    /// Why the context does not match, for `folio status`.
    func mismatch(_ context: ReleaseContext) -> String {
        value(in: context).map { "\(description) does not hold for \(field.rawValue) \($0)" }
            ?? "\(description) needs the app's \(field.rawValue), which it did not give"
    }
}

/// Which release applies to one install, and why (for `folio status`).
package struct ReleaseChoice: Sendable, Equatable {
    /// The chosen release's id; nil for the channel's default entries.
    package var release: Int?
    /// One line per release looked at, in order, and the last says what applies.
    package var reasons: [String]

    package init(release: Int?, reasons: [String]) {
        self.release = release
        self.reasons = reasons
    }
}

extension Manifest {
    /// An install's bucket for a release, 0 to 9999: drawn from a hash of the install id, the
    /// publish history and the release, so an install decides the same way on every sync,
    /// and independently for each release.
    package func rolloutBucket(installID: String, release: Int) -> Int {
        let digest = ContentHash.sha256(Array("folio-rollout 1\n\(history ?? "")\n\(release)\n\(installID)".utf8))
        var n: UInt64 = 0
        for b in digest.prefix(8) { n = n << 8 | UInt64(b) }
        return Int(n % 10_000)
    }

    /// The first release whose conditions hold and whose share takes this install; the
    /// default entries when none does.
    package func chooseRelease(installID: String, context: ReleaseContext) -> ReleaseChoice {
        var reasons: [String] = []
        for r in releases {
            let name = "release \(r.id)"
            if r.halted {
                reasons.append("\(name): halted")
                continue
            }
            if let failed = r.conditions.first(where: { !$0.matches(context) }) {
                reasons.append("\(name): \(failed.mismatch(context))")
                continue
            }
            let bucket = rolloutBucket(installID: installID, release: r.id)
            let share = "bucket \(bucket) of 10000, rollout \(r.percentText)"
            if bucket < r.rolloutBasisPoints {
                reasons.append("\(name) applies: \(r.conditions.isEmpty ? "" : "targeted, ")\(share)")
                return ReleaseChoice(release: r.id, reasons: reasons)
            }
            reasons.append("\(name): outside its rollout (\(share))")
        }
        reasons.append("the default entries of version \(version) apply")
        return ReleaseChoice(release: nil, reasons: reasons)
    }

    /// The release with this id, if the manifest has it.
    package func release(_ id: Int) -> Release? { releases.first { $0.id == id } }

    /// The manifest as one install sees it: `release`'s entries over the defaults (the defaults
    /// alone for nil or a release it no longer has), no releases, its critical flag and
    /// minimum app version merged in.
    package func applying(release id: Int?) -> Manifest {
        guard !releases.isEmpty else { return self }
        var m = self
        m.releases = []
        guard let id, let r = release(id), !r.halted else { return m }
        m.entries = r.apply(to: entries)
        m.critical = critical || r.critical
        let versions = [minimumAppVersion, r.minimumAppVersion].compactMap { text in text.flatMap { t in AppVersion(t).map { (t, $0) } } }
        m.minimumAppVersion = versions.max { $0.1 < $1.1 }?.0
        return m
    }

    /// The entries at `path` in the defaults and in every release (a binary search, then each
    /// release's overlay).
    package func entries(at path: String) -> [Entry] {
        [entry(path)].compactMap { $0 } + releases.compactMap { r in r.entries.first { $0.path == path } }
    }

    /// Every entry any release names: the defaults, then each release's (objects to keep and serve).
    package var allEntries: [Entry] { releases.isEmpty ? entries : entries + releases.flatMap(\.entries) }

    /// The channel this manifest belongs to (`production` when it does not say).
    package var channelName: String { channel ?? Channel.production }
}

/// Channel names and where a channel's files are.
package enum Channel {
    /// The channel at the published directory's root.
    package static let production = "production"

    /// Lowercase letters, digits and `-`, 1 to 32, starting with a letter or digit.
    package static func isValidName(_ name: String) -> Bool { isValidName(bytes: name.utf8) }

    /// The same rule on bytes (the edge reads names from request targets without a String).
    package static func isValidName(bytes: some Collection<UInt8>) -> Bool {
        guard (1...32).contains(bytes.count), bytes.first != 0x2D else { return false }
        return bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }

    /// What a name that is not valid gets told.
    package static func problem(_ name: String) -> String {
        "'\(name)' is not a channel name: use 1 to 32 lowercase letters, digits and '-', like beta or qa-2"
    }
}
