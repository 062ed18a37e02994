import FolioHTTPCore
import FolioLocalization

// Locale negotiation for localized catalogs (`/content/catalogs/<Table>.plist`).
//
// Everything that depends on the published locales is prepared when a `Site` loads: one
// `LocaleChooser` per distinct set of locales (with the answers for every tag CLDR knows
// precomputed), and one `Resource` per table and locale with its own response heads. A request
// only scans its Accept-Language bytes into a stack buffer and does one dictionary lookup per
// acceptable language range; nothing is cached between requests.

/// One member of an `Accept-Language` field value: a language range and its weight.
struct LanguageRange: Sendable, Equatable {
    /// Byte offsets of the range in the field value.
    var start: Int
    var end: Int
    /// The weight in thousandths (0...1000); 0 means "not acceptable".
    var q: Int

    var count: Int { end - start }
}

/// `Accept-Language` parsing (RFC 9110 §12.5.4, language ranges of RFC 4647 §2.1) on raw bytes.
enum AcceptLanguage {
    /// Members beyond this many well-formed ones are ignored (browsers send fewer than ten).
    static let maxRanges = 32
    /// Longer ranges are ignored (the longest registered tags are far shorter).
    static let maxRangeBytes = 63

    /// Parses `value` into `out` (at most `out.count` members), ordered by weight, highest first,
    /// keeping the order of the header among equal weights. Malformed members are skipped.
    /// Returns how many members were written.
    static func parse(_ value: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<LanguageRange>) -> Int {
        var n = 0
        var i = 0
        let length = value.count
        while i < length, n < out.count {
            var end = i
            while end < length, value[end] != UInt8(ascii: ",") { end += 1 }
            if let member = member(value, from: i, to: end) {
                out[n] = member
                n += 1
            }
            i = end + 1
        }
        // A stable insertion sort: few members, no allocation.
        if n > 1 {
            for j in 1..<n {
                let x = out[j]
                var k = j
                while k > 0, out[k - 1].q < x.q {
                    out[k] = out[k - 1]
                    k -= 1
                }
                out[k] = x
            }
        }
        return n
    }

    /// Whether the member is the wildcard `*`.
    static func isWildcard(_ value: UnsafeRawBufferPointer, _ r: LanguageRange) -> Bool {
        r.count == 1 && value[r.start] == UInt8(ascii: "*")
    }

    /// The members of a header as (range, weight in thousandths), in the order they are used.
    static func members(_ header: String) -> [(range: String, q: Int)] {
        var header = header
        return header.withUTF8 { buf in
            let raw = UnsafeRawBufferPointer(buf)
            return withUnsafeTemporaryAllocation(of: LanguageRange.self, capacity: maxRanges) { out in
                let n = parse(raw, into: out)
                return (0..<n).map { k in
                    (range: String(decoding: UnsafeRawBufferPointer(rebasing: raw[out[k].start..<out[k].end]), as: UTF8.self), q: out[k].q)
                }
            }
        }
    }

    @inline(__always) private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    @inline(__always) private static func isAlpha(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    @inline(__always) private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// One member: `OWS range [OWS ";" OWS "q=" qvalue] OWS`; nil when malformed.
    private static func member(_ v: UnsafeRawBufferPointer, from start: Int, to end: Int) -> LanguageRange? {
        var s = start
        var e = end
        while s < e, isSpace(v[s]) { s += 1 }
        while e > s, isSpace(v[e - 1]) { e -= 1 }
        guard s < e else { return nil }  // an empty list element
        var r = s
        while r < e, v[r] != UInt8(ascii: ";"), !isSpace(v[r]) { r += 1 }
        guard isValidRange(v, s, r) else { return nil }
        var q = 1000
        var p = r
        while p < e {
            while p < e, isSpace(v[p]) { p += 1 }
            guard p < e, v[p] == UInt8(ascii: ";") else { return nil }
            p += 1
            while p < e, isSpace(v[p]) { p += 1 }
            var paramEnd = p
            while paramEnd < e, v[paramEnd] != UInt8(ascii: ";") { paramEnd += 1 }
            var t = paramEnd
            while t > p, isSpace(v[t - 1]) { t -= 1 }
            // The only parameter Accept-Language defines is the weight.
            guard t - p >= 3, v[p] | 0x20 == UInt8(ascii: "q"), v[p + 1] == UInt8(ascii: "="),
                let weight = qValue(v, p + 2, t)
            else { return nil }
            q = weight
            p = paramEnd
        }
        return LanguageRange(start: s, end: r, q: q)
    }

    /// `*`, or 1*8ALPHA *("-" 1*8alphanum).
    private static func isValidRange(_ v: UnsafeRawBufferPointer, _ s: Int, _ e: Int) -> Bool {
        let n = e - s
        guard n >= 1, n <= maxRangeBytes else { return false }
        if n == 1, v[s] == UInt8(ascii: "*") { return true }
        var k = s
        var subtagLength = 0
        var first = true
        while k < e {
            let b = v[k]
            if b == UInt8(ascii: "-") {
                guard subtagLength > 0 else { return false }
                subtagLength = 0
                first = false
            } else {
                guard first ? isAlpha(b) : (isAlpha(b) || isDigit(b)) else { return false }
                subtagLength += 1
                guard subtagLength <= 8 else { return false }
            }
            k += 1
        }
        return subtagLength > 0
    }

    /// A qvalue (`0[.ddd]` or `1[.000]`) in thousandths; nil when malformed.
    static func qValue(_ v: UnsafeRawBufferPointer, _ s: Int, _ e: Int) -> Int? {
        let n = e - s
        guard n >= 1, n <= 5 else { return nil }
        let lead = v[s]
        guard lead == UInt8(ascii: "0") || lead == UInt8(ascii: "1") else { return nil }
        if n == 1 { return lead == UInt8(ascii: "1") ? 1000 : 0 }
        guard v[s + 1] == UInt8(ascii: ".") else { return nil }
        var value = 0
        var scale = 100
        var k = s + 2
        while k < e {
            let d = v[k]
            guard isDigit(d) else { return nil }
            if lead == UInt8(ascii: "1"), d != UInt8(ascii: "0") { return nil }
            value += Int(d - 0x30) * scale
            scale /= 10
            k += 1
        }
        return lead == UInt8(ascii: "1") ? 1000 : value
    }
}

/// The locales a catalog table is published in, and the choice among them for an
/// `Accept-Language` value: RFC 4647 lookup through CLDR's parent locales, exactly as
/// `LocaleMatcher.lookup` does it (es-MX → es-419 → es; zh-HK → zh-Hant-HK → zh-Hant, never
/// zh-Hans), in the order of the weights, skipping locales the client excluded with `q=0`.
///
/// Immutable and built at load time, once per distinct set of locales.
final class LocaleChooser: Sendable {
    /// The available locales, sorted by canonical tag.
    let locales: [LocaleTag]
    /// Their canonical tags (`pt-BR`, `zh-Hant`).
    let names: [String]
    /// Preference when no language range decides: the development language (through its own
    /// fallback chain), then another locale of the same language, then `en`, then the rest
    /// alphabetically. The first one is the default.
    let defaultOrder: [Int]
    /// Lowercased canonical tag (and the script-explicit form) of each locale, for exclusion.
    private let filterKeys: [[[UInt8]]]
    /// The index `LocaleMatcher.lookup` builds: a locale also answers to its script-explicit form.
    private let index: [LocaleTag: Int]
    /// Lowercased tag → the locales met along its fallback chain, in order; for every tag CLDR
    /// names (likely subtags, parent locales) and every available one. Other tags are resolved
    /// per request from their `LocaleTag` (same answer, a few microseconds slower).
    private let known: [String: [Int]]
    /// Language subtags (lowercase) no tag starting with can reach a published locale: no
    /// published locale has that language (after ISO aliases) and no CLDR parent leads elsewhere
    /// (as nb → no, hi-Latn → en-IN). Ranges in these languages need no parsing either.
    private let deadLanguages: Set<String>
    /// The development language it was made for.
    let developmentLanguage: LocaleTag?

    init(locales unsorted: [LocaleTag], developmentLanguage: LocaleTag?) {
        var seen: Set<LocaleTag> = []
        let locales = unsorted.filter { seen.insert($0).inserted }.sorted { $0.description < $1.description }
        self.locales = locales
        self.developmentLanguage = developmentLanguage
        names = locales.map(\.description)
        var index: [LocaleTag: Int] = [:]
        for (i, tag) in locales.enumerated() where index[tag] == nil { index[tag] = i }
        for (i, tag) in locales.enumerated() where tag.region != nil {
            let scripted = LocaleMatcher.addingLikelyScript(tag)
            if index[scripted] == nil { index[scripted] = i }
        }
        self.index = index
        filterKeys = locales.map { tag in
            var keys = [Array(tag.description.lowercased().utf8)]
            let scripted = Array(LocaleMatcher.addingLikelyScript(tag).description.lowercased().utf8)
            if scripted != keys[0] { keys.append(scripted) }
            return keys
        }

        func chain(_ tag: LocaleTag) -> [Int] {
            var out: [Int] = []
            for candidate in LocaleMatcher.fallbackChain(for: tag) {
                if let i = index[candidate], !out.contains(i) { out.append(i) }
            }
            return out
        }
        var known: [String: [Int]] = [:]
        var keys = Self.cldrTags
        for tag in locales {
            keys.insert(tag)
            for step in LocaleMatcher.fallbackChain(for: tag) { keys.insert(step) }
        }
        // Every region CLDR names, for each published language (fr-CA, de-AT, pt-AO…).
        for language in Set(locales.map(\.language)) {
            for region in Self.cldrRegions {
                if let tag = LocaleTag(language: language, region: region) { keys.insert(tag) }
            }
        }
        for tag in keys { known[tag.description.lowercased()] = chain(tag) }
        self.known = known

        var crossing: [String: [LocaleTag]] = [:]  // language → parent-locale keys of that language
        for key in CLDRData.parentLocales.keys {
            if let tag = LocaleTag(key) { crossing[tag.language, default: []].append(tag) }
        }
        let published = Set(locales.map(\.language))
        var dead: Set<String> = []
        let aliases = ["iw", "in", "ji", "jw", "mo", "tl", "sh"]  // only to widen the set; LocaleTag decides
        for language in Set(Self.cldrTags.map(\.language)).union(published).union(aliases) {
            guard let canonical = LocaleTag(language)?.language else { continue }
            if published.contains(canonical) { continue }
            if crossing[canonical, default: []].contains(where: { !chain($0).isEmpty }) { continue }
            dead.insert(language)
        }
        deadLanguages = dead

        var order: [Int] = []
        func add(_ i: Int) { if !order.contains(i) { order.append(i) } }
        if let dev = developmentLanguage {
            if let i = chain(dev).first { add(i) }
            for (i, tag) in locales.enumerated() where tag.language == dev.language { add(i) }
        }
        if let en = LocaleTag("en"), let i = chain(en).first { add(i) }
        for i in locales.indices { add(i) }
        defaultOrder = order
    }

    /// Every tag CLDR's tables name, with the language-region and language-script forms of
    /// the likely subtags (so `en-us`, `de-de`, `zh-tw` resolve without parsing).
    static let cldrTags: Set<LocaleTag> = {
        var set: Set<LocaleTag> = []
        func add(_ text: String) {
            guard !text.hasPrefix("und"), text != "root", let tag = LocaleTag(text) else { return }
            set.insert(tag)
            if let script = tag.script {
                if let t = LocaleTag(language: tag.language, script: script) { set.insert(t) }
                if let region = tag.region, let t = LocaleTag(language: tag.language, region: region) { set.insert(t) }
            }
            if let t = LocaleTag(language: tag.language) { set.insert(t) }
        }
        for (key, value) in CLDRData.likelySubtags {
            add(key)
            add(value)
        }
        for (key, value) in CLDRData.parentLocales {
            add(key)
            add(value)
        }
        return set
    }()

    /// Every region subtag CLDR's tables name.
    static let cldrRegions: Set<String> = {
        var regions: Set<String> = []
        for text in Array(CLDRData.likelySubtags.keys) + Array(CLDRData.likelySubtags.values) + Array(CLDRData.parentLocales.keys) {
            if let region = LocaleTag(text)?.region { regions.insert(region) }
        }
        return regions
    }()

    /// How many tags resolve without parsing.
    var knownCount: Int { known.count }

    /// Whether a lowercased range is answered without parsing it as a tag.
    func resolvesWithoutParsing(_ key: String) -> Bool {
        known[key] != nil || deadLanguages.contains(String(key.split(separator: "-").first ?? ""))
    }

    /// The locales along the fallback chain of a lowercased language range, in order.
    @inline(__always)
    private func candidates(_ key: String) -> [Int] {
        if let hit = known[key] { return hit }
        let utf8 = key.utf8
        let language = utf8.firstIndex(of: UInt8(ascii: "-")).map { String(key[..<$0]) } ?? key
        if deadLanguages.contains(language) { return [] }
        guard let tag = LocaleTag(key) else { return [] }
        var out: [Int] = []
        for candidate in LocaleMatcher.fallbackChain(for: tag) {
            if let i = index[candidate], !out.contains(i) { out.append(i) }
        }
        return out
    }

    /// The index of the locale to serve for an `Accept-Language` value (nil: no header).
    func choose(_ header: HeaderValue?) -> Int {
        guard let header else { return defaultOrder[0] }
        let value = header.bytes
        return withUnsafeTemporaryAllocation(of: LanguageRange.self, capacity: AcceptLanguage.maxRanges) { out in
            let n = AcceptLanguage.parse(value, into: out)
            let members = UnsafeMutableBufferPointer(rebasing: out[0..<n])
            var excluding = false
            for r in members where r.q == 0 {
                excluding = true
                break
            }
            for r in members where r.q > 0 && !AcceptLanguage.isWildcard(value, r) {
                // The key: the range in lowercase (a small string: no allocation up to 15 bytes).
                let key = String(unsafeUninitializedCapacity: r.count) { dst in
                    for k in 0..<r.count {
                        let b = value[r.start + k]
                        dst[k] = b >= 0x41 && b <= 0x5A ? b | 0x20 : b
                    }
                    return r.count
                }
                for i in candidates(key) where !excluding || isAcceptable(i, value, members) { return i }
            }
            for i in defaultOrder where !excluding || isAcceptable(i, value, members) { return i }
            // Every locale is excluded: serve the default rather than 406 (RFC 9110 §12.5.4 allows it).
            return defaultOrder[0]
        }
    }

    /// Whether locale `i` is acceptable: the most specific range matching it by RFC 4647 basic
    /// filtering (`es` matches `es-419`) has a weight above 0; a locale no range matches is
    /// acceptable unless `*;q=0` is present.
    private func isAcceptable(_ i: Int, _ value: UnsafeRawBufferPointer, _ members: UnsafeMutableBufferPointer<LanguageRange>) -> Bool {
        var bestLength = -1
        var bestQ = 0
        var wildcardQ: Int?
        for r in members {
            if AcceptLanguage.isWildcard(value, r) {
                wildcardQ = max(wildcardQ ?? 0, r.q)
                continue
            }
            for key in filterKeys[i] where Self.basicMatch(value, r, key) {
                if r.count > bestLength {
                    bestLength = r.count
                    bestQ = r.q
                } else if r.count == bestLength {
                    bestQ = max(bestQ, r.q)
                }
            }
        }
        if bestLength >= 0 { return bestQ > 0 }
        if let wildcardQ { return wildcardQ > 0 }
        return true
    }

    /// RFC 4647 §3.3.1: the range equals the tag or is a prefix of it ending at a `-` (ASCII case-insensitive).
    private static func basicMatch(_ value: UnsafeRawBufferPointer, _ r: LanguageRange, _ tag: [UInt8]) -> Bool {
        guard r.count <= tag.count else { return false }
        if r.count < tag.count, tag[r.count] != UInt8(ascii: "-") { return false }
        for k in 0..<r.count {
            let b = value[r.start + k]
            if (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) != tag[k] { return false }
        }
        return true
    }
}

/// One localized table: its chooser and, per locale, the resource served at the negotiated URL.
struct CatalogTable: Sendable {
    let chooser: LocaleChooser
    /// By chooser index: heads with `Content-Language` and `Vary: Accept-Language, Accept-Encoding`.
    let variants: [Resource]

    func resource(for acceptLanguage: HeaderValue?) -> Resource { variants[chooser.choose(acceptLanguage)] }
}

/// The catalog routes of one `Site`: negotiated tables and explicit locales by canonical tag.
struct CatalogRoutes: Sendable {
    static let prefix = "/content/catalogs/"

    /// `/content/catalogs/<Table>.plist` → the table.
    var tables: [String: CatalogTable] = [:]
    /// `<canonical locale>/<Table>.plist` → the explicit resource (the one at `/content/catalogs/…`).
    var explicit: [String: Resource] = [:]
    /// The same with the locale folded (lowercase, `_` → `-`): `pt-br/…`, `zh-hant/…`.
    var folded: [String: Resource] = [:]

    mutating func addExplicit(_ locale: LocaleTag, file: String, _ resource: Resource) {
        explicit[locale.description + "/" + file] = resource
        folded[Self.fold(locale.description) + "/" + file] = resource
    }

    /// Lowercase, with `_` as `-`: equal for two spellings of one tag that differ only so.
    static func fold(_ s: some StringProtocol) -> String {
        String(decoding: s.utf8.map { b in b == UInt8(ascii: "_") ? UInt8(ascii: "-") : (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) }, as: UTF8.self)
    }

    /// The resource for a path no exact route answers: a negotiated table, or an explicit
    /// catalog whose locale is spelt non-canonically (`pt_BR`, `pt-br`, `zh_Hant`).
    func resource(_ path: String, acceptLanguage: HeaderValue?) -> Resource? {
        if let table = tables[path] { return table.resource(for: acceptLanguage) }
        guard !explicit.isEmpty, path.utf8.starts(with: Self.prefix.utf8) else { return nil }
        let rest = path.utf8.dropFirst(Self.prefix.utf8.count)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let file = rest[rest.index(after: slash)...]
        guard !file.contains(UInt8(ascii: "/")), let segment = String(rest[..<slash]), let name = String(file) else { return nil }
        // Case and separator differences need no parsing; other spellings (`pt_BR.UTF-8`, `iw`) go through LocaleTag.
        if let hit = folded[Self.fold(segment) + "/" + name] { return hit }
        guard let tag = LocaleTag(segment) else { return nil }
        return explicit[tag.description + "/" + name]
    }

    /// `catalogs/<locale>/<Table>.plist` split into its locale segment and `<Table>.plist`.
    static func split(_ entryPath: String) -> (locale: String, file: String)? {
        let parts = entryPath.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "catalogs", !parts[1].isEmpty, parts[2].hasSuffix(".plist"),
            parts[2].utf8.count > 6
        else { return nil }
        return (String(parts[1]), String(parts[2]))
    }
}
