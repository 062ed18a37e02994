import Testing

@testable import FolioLocalization

/// Expands a CLDR sample list ("0~15, 100, 1.0~1.5, …") into concrete decimal strings.
/// Ranges yield every value when short, otherwise both ends and a middle value, with the
/// sample's decimal places; "…" and compact notations such as "1c3" are skipped.
func expandPluralSamples(_ list: String) -> [String] {
    var result: [String] = []
    for rawItem in list.split(separator: ",") {
        let item = String(rawItem.filter { $0 != " " })
        if item.isEmpty || item == "…" || item.contains("c") || item.contains("e") { continue }
        let ends = item.split(separator: "~").map(String.init)
        guard ends.count == 2 else {
            result.append(item)
            continue
        }
        let places = ends[0].split(separator: ".").dropFirst().first?.count ?? 0
        guard let low = scaled(ends[0]), let high = scaled(ends[1]), low <= high else {
            result.append(contentsOf: ends)
            continue
        }
        let values: [Int] = high - low <= 40 ? Array(low...high) : [low, (low + high) / 2, high]
        result.append(contentsOf: values.map { format($0, places: places) })
    }
    return result
}

private func scaled(_ s: String) -> Int? { Int(String(s.filter { $0 != "." })) }

private func format(_ value: Int, places: Int) -> String {
    guard places > 0 else { return String(value) }
    var digits = String(value)
    while digits.count <= places { digits = "0" + digits }
    let cut = digits.index(digits.endIndex, offsetBy: -places)
    return digits[..<cut] + "." + digits[cut...]
}

@Suite("PluralRules")
struct PluralRulesTests {
    @Test("every CLDR rule in the generated data parses")
    func allRulesParse() throws {
        var count = 0
        for group in CLDRData.cardinalPluralRules {
            for rule in group.rules {
                _ = try PluralCondition(parsing: rule.condition)
                count += 1
            }
        }
        #expect(CLDRData.cardinalPluralRules.count >= 30)
        #expect(count > 100)
    }

    @Test("every CLDR sample value evaluates to its category, for every locale")
    func cldrSamples() {
        var checked = 0
        for group in CLDRData.cardinalPluralRules {
            for locale in group.locales {
                guard let rules = PluralRules(locale: locale) else {
                    Issue.record("no rules for \(locale)")
                    continue
                }
                #expect(rules.categories == group.rules.compactMap { PluralCategory(rawValue: $0.category) })
                for rule in group.rules {
                    let samples = expandPluralSamples(rule.integerSamples) + expandPluralSamples(rule.decimalSamples)
                    for sample in samples {
                        let got = rules.category(for: sample)
                        if got.rawValue != rule.category {
                            Issue.record("\(locale) \(sample): expected \(rule.category), got \(got)")
                        }
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 5000)
    }

    @Test("sample expansion respects decimal places and skips compact notation")
    func sampleExpansion() {
        #expect(expandPluralSamples("0.0~1.5, 1c3, …") == (0...15).map { "\($0 / 10).\($0 % 10)" })
        #expect(expandPluralSamples("2~4, 100") == ["2", "3", "4", "100"])
        #expect(expandPluralSamples("0.00~0.04") == ["0.00", "0.01", "0.02", "0.03", "0.04"])
        #expect(expandPluralSamples("100~1000") == ["100", "550", "1000"])
    }

    @Test("operands from decimal strings")
    func operands() throws {
        let x = try #require(PluralOperands("-1.50"))
        #expect(x.i.value == 1 && x.v == 2 && x.w == 1 && x.f.value == 50 && x.t.value == 5)
        let y = try #require(PluralOperands("1.0"))
        #expect(y.v == 1 && y.w == 0 && y.t.value == 0)
        #expect(PluralOperands("") == nil)
        #expect(PluralOperands("1.") == nil)
        #expect(PluralOperands("abc") == nil)
        #expect(PluralOperands("1.2.3") == nil)
        let huge = try #require(PluralOperands("123456789012345678901234567890.5"))
        #expect(huge.i.value == nil)
        #expect(huge.i.remainder(dividingBy: 100) == 90)
    }

    @Test("English: 1 is one, 1.0 and 0 are other")
    func english() throws {
        let en = try #require(PluralRules(locale: "en"))
        #expect(en.category(for: "1") == .one)
        #expect(en.category(for: 1) == .one)
        #expect(en.category(for: "1.0") == .other)
        #expect(en.category(for: "0") == .other)
        #expect(en.category(for: -1) == .one)
        #expect(en.categories == [.one, .other])
        #expect(PluralRules(locale: "en_US.UTF-8")?.category(for: 1) == .one)
    }

    @Test("Russian: 21 one, 22 few, 25 many, 1.5 other")
    func russian() throws {
        let ru = try #require(PluralRules(locale: "ru"))
        #expect(ru.category(for: 21) == .one)
        #expect(ru.category(for: 22) == .few)
        #expect(ru.category(for: 25) == .many)
        #expect(ru.category(for: 11) == .many)
        #expect(ru.category(for: "1.5") == .other)
    }

    @Test("Polish: 1 one, 22 few, 25 many")
    func polish() throws {
        let pl = try #require(PluralRules(locale: "pl-PL"))
        #expect(pl.category(for: 1) == .one)
        #expect(pl.category(for: 22) == .few)
        #expect(pl.category(for: 25) == .many)
        #expect(pl.category(for: 12) == .many)
    }

    @Test("Arabic: 0 zero, 2 two, 3 few, 11 many, 100 other")
    func arabic() throws {
        let ar = try #require(PluralRules(locale: "ar"))
        #expect(ar.category(for: 0) == .zero)
        #expect(ar.category(for: 1) == .one)
        #expect(ar.category(for: 2) == .two)
        #expect(ar.category(for: 3) == .few)
        #expect(ar.category(for: 11) == .many)
        #expect(ar.category(for: 100) == .other)
        #expect(ar.categories == [.zero, .one, .two, .few, .many, .other])
    }

    @Test("Welsh: 0 zero, 1 one, 2 two, 3 few, 6 many, 4 other")
    func welsh() throws {
        let cy = try #require(PluralRules(locale: "cy"))
        #expect(cy.category(for: 0) == .zero)
        #expect(cy.category(for: 1) == .one)
        #expect(cy.category(for: 2) == .two)
        #expect(cy.category(for: 3) == .few)
        #expect(cy.category(for: 6) == .many)
        #expect(cy.category(for: 4) == .other)
    }

    @Test("Japanese has only other; French 0 and 1 are one, 1000000 is many")
    func japaneseAndFrench() throws {
        #expect(PluralRules(locale: "ja")?.category(for: 1) == .other)
        #expect(PluralRules(locale: "ja")?.categories == [.other])
        let fr = try #require(PluralRules(locale: "fr"))
        #expect(fr.category(for: 0) == .one)
        #expect(fr.category(for: 1) == .one)
        #expect(fr.category(for: "1.5") == .one)
        #expect(fr.category(for: 2) == .other)
        #expect(fr.category(for: 1_000_000) == .many)
        #expect(fr.category(for: 2_000_000) == .many)
        #expect(fr.category(for: "1000000.0") == .other)
        #expect(fr.categories == [.one, .many, .other])
    }

    @Test("Maltese has two (not in CLDR 41): 2 two, 0 and 3~10 few, 11~19 many, 102 other")
    func maltese() throws {
        let mt = try #require(PluralRules(locale: "mt"))
        #expect(mt.categories == [.one, .two, .few, .many, .other])
        #expect(mt.category(for: 1) == .one)
        #expect(mt.category(for: 2) == .two)
        #expect(mt.category(for: "2.0") == .two)
        #expect(mt.category(for: 0) == .few)
        #expect(mt.category(for: 3) == .few)
        #expect(mt.category(for: 103) == .few)
        #expect(mt.category(for: 11) == .many)
        #expect(mt.category(for: 111) == .many)
        #expect(mt.category(for: 102) == .other)
        #expect(mt.category(for: 20) == .other)
        #expect(mt.category(for: "2.5") == .other)
    }

    @Test("rules CLDR changed after 41: Hebrew, Romanian, Catalan, Icelandic")
    func changedSinceCLDR41() throws {
        let he = try #require(PluralRules(locale: "he"))
        #expect(he.categories == [.one, .two, .other])
        #expect(he.category(for: 20) == .other)
        #expect(he.category(for: "0.5") == .one)
        #expect(he.category(for: "1.5") == .other)
        #expect(PluralRules(locale: "iw")?.category(for: 2) == .two)
        let ro = try #require(PluralRules(locale: "ro"))
        #expect(ro.category(for: 101) == .few)
        #expect(ro.category(for: 119) == .few)
        #expect(ro.category(for: 120) == .other)
        #expect(ro.category(for: 1) == .one)
        let ca = try #require(PluralRules(locale: "ca-ES"))
        #expect(ca.categories == [.one, .many, .other])
        #expect(ca.category(for: 1_000_000) == .many)
        #expect(ca.category(for: "1000000.0") == .other)
        let `is` = try #require(PluralRules(locale: "is"))
        #expect(`is`.category(for: "0.11") == .other)
        #expect(`is`.category(for: "11.1") == .one)
        #expect(`is`.category(for: 21) == .one)
        #expect(`is`.category(for: 11) == .other)
    }

    @Test("locale fallback: pt-PT has its own rules, pt-AO inherits them, pt-BR uses pt, unknown uses root")
    func localeFallback() throws {
        #expect(PluralRules(locale: "pt-PT")?.resolvedLocale == "pt-PT")
        #expect(PluralRules(locale: "pt_PT")?.category(for: 0) == .other)
        #expect(PluralRules(locale: "pt-AO")?.resolvedLocale == "pt-PT")
        #expect(PluralRules(locale: "pt-BR")?.resolvedLocale == "pt")
        #expect(PluralRules(locale: "pt-BR")?.category(for: 0) == .one)
        #expect(PluralRules(locale: "sr-Latn-RS")?.resolvedLocale == "sr")
        let unknown = try #require(PluralRules(locale: "xx-YY"))
        #expect(unknown.resolvedLocale == "root")
        #expect(unknown.categories == [.other])
        #expect(PluralRules(locale: "") == nil)
        #expect(PluralRules(locale: "1234") == nil)
        #expect(PluralRules(tag: LocaleTag("zh_Hant_HK")!).resolvedLocale == "zh")
        #expect(PluralRules(tag: LocaleTag("ru-RU")!).category(for: 22) == .few)
    }

    @Test("rule syntax: is, not in, within, mod")
    func syntaxVariants() throws {
        let within = try PluralCondition(parsing: "n within 0..2")
        #expect(within.matches(try #require(PluralOperands("1.5"))))
        let inRange = try PluralCondition(parsing: "n in 0..2")
        #expect(!inRange.matches(try #require(PluralOperands("1.5"))))
        #expect(inRange.matches(PluralOperands(2)))
        let isNot = try PluralCondition(parsing: "n mod 10 is not 4 and i not in 5,6")
        #expect(isNot.matches(PluralOperands(13)))
        #expect(!isNot.matches(PluralOperands(14)))
        #expect(!isNot.matches(PluralOperands(5)))
        #expect(try PluralCondition(parsing: "").matches(PluralOperands(7)))
    }

    @Test(
        "malformed rule text throws instead of crashing",
        arguments: [
            "n = ", "n % = 1", "i = 1..", "x = 1", "n = 1 and", "n = 1 or or n = 2", "n == 1", "n = 3..1",
            "n % 0 = 1", "n = 99999999999999999999999", "n = 1 !", "= 1", "n = 1.5", "n = a", "n is", "n not 1",
            "n = 1 n = 2", "🙂",
        ])
    func malformedRules(_ text: String) {
        #expect(throws: PluralRuleError.self) { try PluralCondition(parsing: text) }
    }
}
