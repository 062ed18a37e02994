// BCP 47 language tags (language, script, region, variants) parsed from BCP 47 or POSIX
// locale names, and RFC 4647 lookup with CLDR parent locales and likely-subtag script inference.

/// A canonicalised BCP 47 language tag: language, optional script and region, and variants.
///
/// Extensions and private-use subtags (`-u-…`, `-x-…`) are validated and then dropped.
/// The POSIX names `C` and `POSIX` mean "no locale" and parse to nil.
public struct LocaleTag: Hashable, Sendable, CustomStringConvertible {
    /// The language subtag, lowercase (e.g. "zh"); deprecated codes are replaced (iw → he).
    public let language: String
    /// The script subtag in title case (e.g. "Hant"), if any.
    public let script: String?
    /// The region subtag in uppercase letters or three digits (e.g. "HK", "419"), if any.
    public let region: String?
    /// The variant subtags, lowercase, in order.
    public let variants: [String]

    /// Makes a tag from already separated subtags, canonicalising their case; nil if any is invalid.
    public init?(language: String, script: String? = nil, region: String? = nil, variants: [String] = []) {
        var text = language
        if let script { text += "-" + script }
        if let region { text += "-" + region }
        for variant in variants { text += "-" + variant }
        guard let tag = LocaleTag(text), tag.script?.lowercased() == script?.lowercased(),
            tag.region?.lowercased() == region?.lowercased(), tag.variants.count == variants.count
        else { return nil }
        self = tag
    }

    private init(canonical language: String, script: String?, region: String?, variants: [String]) {
        self.language = language
        self.script = script
        self.region = region
        self.variants = variants
    }

    /// Parses a BCP 47 tag (`pt-BR`, `zh-Hant-HK`, `es-419`) or a POSIX locale name
    /// (`pt_BR`, `en_US.UTF-8`, `sr@latin`); nil for invalid syntax and for `C`/`POSIX`.
    public init?(_ text: String) {
        var body = Substring(text)
        while body.first == " " { body = body.dropFirst() }
        while body.last == " " { body = body.dropLast() }
        var modifier: Substring?
        if let at = body.firstIndex(of: "@") {
            modifier = body[body.index(after: at)...]
            body = body[..<at]
        }
        if let dot = body.firstIndex(of: ".") {
            let codeset = body[body.index(after: dot)...]
            let isCodesetCharacter: (Character) -> Bool = {
                $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_")
            }
            guard !codeset.isEmpty, codeset.allSatisfy(isCodesetCharacter) else { return nil }
            body = body[..<dot]
        }
        let lowered = body.lowercased()
        if lowered == "c" || lowered == "posix" || body.isEmpty { return nil }
        let subtags = body.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        func isAlpha(_ s: Substring) -> Bool { s.allSatisfy { $0.isASCII && $0.isLetter } }
        func isDigits(_ s: Substring) -> Bool { s.allSatisfy { $0.isASCII && $0.isNumber } }
        func isAlnum(_ s: Substring) -> Bool { s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
        guard subtags.allSatisfy({ !$0.isEmpty && $0.count <= 8 && isAlnum($0) }) else { return nil }
        var k = 0
        let first = subtags[0]
        guard isAlpha(first), (2...3).contains(first.count) || (5...8).contains(first.count) else { return nil }
        var language = first.lowercased()
        language = Self.languageAliases[language] ?? language
        k = 1
        // Extended language subtags (e.g. zh-yue) are not supported; they fail as invalid below.
        var script: String?
        if k < subtags.count, subtags[k].count == 4, isAlpha(subtags[k]) {
            script = subtags[k].prefix(1).uppercased() + subtags[k].dropFirst().lowercased()
            k += 1
        }
        var region: String?
        if k < subtags.count,
            (subtags[k].count == 2 && isAlpha(subtags[k])) || (subtags[k].count == 3 && isDigits(subtags[k]))
        {
            region = subtags[k].uppercased()
            k += 1
        }
        var variants: [String] = []
        while k < subtags.count, subtags[k].count >= 5 || (subtags[k].count == 4 && subtags[k].first!.isNumber) {
            let variant = subtags[k].lowercased()
            if variants.contains(variant) { return nil }
            variants.append(variant)
            k += 1
        }
        // Extensions and private use: a singleton followed by at least one subtag; validated, then dropped.
        if k < subtags.count {
            guard subtags[k].count == 1 else { return nil }
            var expectingSubtag = false
            var privateUse = false
            for subtag in subtags[k...] {
                if subtag.count == 1 && !privateUse {
                    if expectingSubtag { return nil }
                    expectingSubtag = true
                    privateUse = subtag.lowercased() == "x"
                } else {
                    if subtag.count < 2 && !privateUse { return nil }
                    expectingSubtag = false
                }
            }
            if expectingSubtag { return nil }
        }
        if let modifier, !modifier.isEmpty {
            switch modifier.lowercased() {
            case "latin": script = script ?? "Latn"
            case "cyrillic": script = script ?? "Cyrl"
            case "devanagari": script = script ?? "Deva"
            default:
                let m = modifier.lowercased()
                if (5...8).contains(m.count), m.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }),
                    !variants.contains(m)
                {
                    variants.append(m)
                }  // Other POSIX modifiers (e.g. @euro) carry no language information.
            }
        }
        self.init(canonical: language, script: script, region: region, variants: variants)
    }

    /// Deprecated ISO 639 codes and their replacements.
    private static let languageAliases: [String: String] = [
        "iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro", "tl": "fil", "sh": "sr",
    ]

    /// The tag in canonical BCP 47 form, e.g. "zh-Hant-HK".
    public var description: String {
        ([language] + [script, region].compactMap { $0 } + variants).joined(separator: "-")
    }

    /// The tag with its last subtag removed (variant, then region, then script), or nil for a bare language.
    public var truncated: LocaleTag? {
        if !variants.isEmpty {
            return LocaleTag(canonical: language, script: script, region: region, variants: variants.dropLast())
        }
        if region != nil { return LocaleTag(canonical: language, script: script, region: nil, variants: []) }
        if script != nil { return LocaleTag(canonical: language, script: nil, region: nil, variants: []) }
        return nil
    }

    /// The same tag with the given script.
    func with(script: String?) -> LocaleTag {
        LocaleTag(canonical: language, script: script, region: region, variants: variants)
    }
}
