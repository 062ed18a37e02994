import Testing

@testable import FolioLocalization

private func tag(_ text: String) -> LocaleTag {
    guard let tag = LocaleTag(text) else {
        Issue.record("could not parse \(text)")
        return LocaleTag("und")!
    }
    return tag
}

@Suite("LocaleTag")
struct LocaleTagTests {
    @Test(
        "parses and canonicalises BCP 47 and POSIX names",
        arguments: [
            ("pt-BR", "pt-BR"), ("zh-Hant-HK", "zh-Hant-HK"), ("es-419", "es-419"), ("pt_BR", "pt-BR"),
            ("zh_Hans", "zh-Hans"), ("sr@latin", "sr-Latn"), ("en_US.UTF-8", "en-US"), ("de_DE.UTF-8", "de-DE"),
            ("EN-us", "en-US"), ("ZH-hant-hk", "zh-Hant-HK"), ("sl-rozaj-biske", "sl-rozaj-biske"),
            ("de-CH-1901", "de-CH-1901"), ("en-US-u-ca-gregory", "en-US"), ("en-x-private", "en"), ("iw-IL", "he-IL"),
            ("ca_ES@valencia", "ca-ES-valencia"), ("fr_FR@euro", "fr-FR"), ("  fr  ", "fr"),
        ])
    func parses(_ input: String, _ expected: String) {
        #expect(LocaleTag(input)?.description == expected)
    }

    @Test(
        "rejects invalid syntax and the POSIX C locale",
        arguments: [
            "", "C", "POSIX", "C.UTF-8", "e", "en-US-US", "en--US", "en-", "-en", "en-US-u", "en-a-b",
            "1234", "en-toolongsubtag", "en US", "zh-Hant-HK-x", "en.", "ab_cd_efghijklm", "rozaj-rozaj-rozaj",
            "sl-rozaj-rozaj",
        ])
    func rejects(_ input: String) {
        #expect(LocaleTag(input) == nil)
    }

    @Test("components and memberwise construction")
    func components() {
        let t = tag("zh_hant_hk")
        #expect(t.language == "zh" && t.script == "Hant" && t.region == "HK" && t.variants.isEmpty)
        #expect(LocaleTag(language: "ZH", script: "hant", region: "hk") == t)
        #expect(LocaleTag(language: "zh", script: "Hanty") == nil)
        #expect(t.truncated?.description == "zh-Hant")
        #expect(t.truncated?.truncated?.description == "zh")
        #expect(t.truncated?.truncated?.truncated == nil)
    }
}

@Suite("LocaleMatcher")
struct LocaleMatcherTests {
    @Test(
        "fallback chains follow CLDR parent locales before truncation",
        arguments: [
            ("es-MX", "es-MX es-419 es"), ("en-GB", "en-GB en-001 en"), ("en-AT", "en-AT en-150 en-001 en"),
            ("pt-AO", "pt-AO pt-PT pt"), ("pt-BR", "pt-BR pt"), ("zh-HK", "zh-Hant-HK zh-Hant"),
            ("zh-Hant-HK", "zh-Hant-HK zh-Hant"), ("zh-MO", "zh-Hant-MO zh-Hant-HK zh-Hant"),
            ("zh-TW", "zh-Hant-TW zh-Hant"), ("zh-CN", "zh-Hans-CN zh-Hans zh"),
            ("zh-Hans-CN", "zh-Hans-CN zh-Hans zh"),
            ("zh-SG", "zh-Hans-SG zh-Hans zh"), ("zh", "zh-Hans zh"), ("zh-Hant", "zh-Hant"),
            ("sr-RS", "sr-Cyrl-RS sr-Cyrl sr"), ("sr@latin", "sr-Latn"), ("de-CH-1901", "de-CH-1901 de-CH de"),
            ("fr", "fr"),
        ])
    func chains(_ input: String, _ expected: String) {
        let chain = LocaleMatcher.fallbackChain(for: tag(input)).map(\.description)
        #expect(chain == expected.split(separator: " ").map(String.init))
    }

    @Test("Traditional Chinese never falls back to Simplified or plain zh")
    func traditionalChineseIsolation() {
        for input in ["zh-HK", "zh-TW", "zh-MO", "zh-Hant", "zh-Hant-HK", "zh-Hant-SG"] {
            let chain = LocaleMatcher.fallbackChain(for: tag(input)).map(\.description)
            #expect(!chain.contains("zh") && !chain.contains { $0.hasPrefix("zh-Hans") }, "\(input): \(chain)")
        }
        let onlySimplified = [tag("zh"), tag("zh-Hans"), tag("en")]
        let result = LocaleMatcher.lookup([tag("zh-HK")], available: onlySimplified, developmentLanguage: tag("en"))
        #expect(result == tag("en"))
    }

    static let available = [
        "en", "fr", "de", "es", "es-419", "pt-BR", "ru", "pl", "ar", "ja", "zh-Hans", "zh-Hant", "cy",
    ]

    @Test(
        "lookup against a realistic catalog list",
        arguments: [
            ("es-MX", "es-419"), ("es-ES", "es"), ("en-GB", "en"), ("pt-PT", "en"), ("pt-AO", "en"), ("pt-BR", "pt-BR"),
            ("zh-HK", "zh-Hant"), ("zh-SG", "zh-Hans"), ("zh-TW", "zh-Hant"), ("zh-CN", "zh-Hans"), ("zh", "zh-Hans"),
            ("fr-CA", "fr"), ("de_DE.UTF-8", "de"), ("cy-GB", "cy"), ("ko-KR", "en"), ("ar-EG", "ar"),
        ])
    func lookup(_ input: String, _ expected: String) {
        let result = LocaleMatcher.lookup(
            [tag(input)], available: Self.available.map(tag), developmentLanguage: tag("en"))
        #expect(result.description == expected)
    }

    @Test("lookup tries every requested tag's whole chain in preference order")
    func preferenceOrder() {
        let available = Self.available.map(tag)
        func look(_ requested: [String], _ available: [LocaleTag], _ dev: String = "en") -> String {
            LocaleMatcher.lookup(requested.map(tag), available: available, developmentLanguage: tag(dev)).description
        }
        #expect(look(["ko", "es-AR", "fr"], available) == "es-419")
        #expect(look([], available, "de") == "de")
        // An available tag without a script still serves the script-explicit request.
        #expect(look(["zh-Hant-TW"], [tag("zh-TW")]) == "zh-TW")
        #expect(look(["pt-AO"], [tag("pt-PT"), tag("pt")]) == "pt-PT")
    }
}
