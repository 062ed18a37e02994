/// RFC 4647 lookup over CLDR's locale inheritance (parent locales, then truncation).
public enum LocaleMatcher {
    /// Languages whose region decides the script (a likely subtag for some region differs from the default).
    private static let multiScriptLanguages: Set<String> = {
        var result: Set<String> = []
        for (from, to) in CLDRData.likelySubtags {
            let key = from.split(separator: "-")
            guard key.count == 2, key[1].count != 4,
                let regional = to.split(separator: "-").dropFirst().first,
                let base = CLDRData.likelySubtags[String(key[0])]?.split(separator: "-").dropFirst().first,
                regional != base
            else { continue }
            result.insert(String(key[0]))
        }
        return result
    }()

    /// The tag with the script made explicit when the language is written in more than one script
    /// (so zh-HK becomes zh-Hant-HK and zh-CN becomes zh-Hans-CN); otherwise the tag unchanged.
    public static func addingLikelyScript(_ tag: LocaleTag) -> LocaleTag {
        guard tag.script == nil, multiScriptLanguages.contains(tag.language) else { return tag }
        var keys: [String] = []
        if let region = tag.region { keys.append(tag.language + "-" + region) }
        keys.append(tag.language)
        for key in keys {
            if let likely = CLDRData.likelySubtags[key], let full = LocaleTag(likely), let script = full.script {
                return tag.with(script: script)
            }
        }
        return tag
    }

    /// The tags to try for a requested tag, most specific first: CLDR's explicit parent locale where
    /// there is one (stopping at "root"), otherwise truncation. Example: es-MX → es-419 → es;
    /// zh-HK → zh-Hant-HK → zh-Hant (never zh or zh-Hans).
    public static func fallbackChain(for tag: LocaleTag) -> [LocaleTag] {
        var chain: [LocaleTag] = []
        var current: LocaleTag? = addingLikelyScript(tag)
        while let step = current, !chain.contains(step), chain.count < 16 {
            chain.append(step)
            if let parent = CLDRData.parentLocales[step.description] {
                current = parent == "root" ? nil : LocaleTag(parent)
            } else {
                current = step.truncated
            }
        }
        return chain
    }

    /// The best available tag for the requested tags (in preference order) by RFC 4647 lookup over
    /// each requested tag's fallback chain; the development language when nothing matches.
    public static func lookup(
        _ requested: [LocaleTag], available: [LocaleTag], developmentLanguage: LocaleTag
    ) -> LocaleTag {
        // An available tag also answers to its script-explicit form (an available "zh-TW" serves zh-Hant-TW).
        var index: [LocaleTag: LocaleTag] = [:]
        for tag in available where index[tag] == nil { index[tag] = tag }
        for tag in available where tag.region != nil {
            let scripted = addingLikelyScript(tag)
            if index[scripted] == nil { index[scripted] = tag }
        }
        for tag in requested {
            for candidate in fallbackChain(for: tag) {
                if let match = index[candidate] { return match }
            }
        }
        return developmentLanguage
    }
}
