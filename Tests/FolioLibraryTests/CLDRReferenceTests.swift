import Foundation
import Testing

@testable import FolioLocalization
@testable import FolioSupport

/// Babel's plural categories for every locale it knows, read from the golden file that
/// `scripts/gen-cldr.py` writes to `Tests/Fixtures/` (beside the test targets, so SwiftPM has no
/// unhandled resource in this target).
struct PluralReference: Sendable {
    /// The CLDR release Babel's data came from.
    let cldrVersion: String
    /// The Babel release that computed the categories.
    let babelVersion: String
    /// The numbers, as the decimal strings `PluralRules` takes.
    let values: [String]
    /// Each locale identifier (Babel's, with underscores) and its category for each value.
    let locales: [(id: String, categories: [PluralCategory])]

    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/cldr-plural-reference.txt").path

    enum ParseError: Error, CustomStringConvertible {
        case malformed(line: Int, String)
        var description: String {
            switch self {
            case .malformed(let line, let why): "cldr-plural-reference.txt:\(line): \(why)"
            }
        }
    }

    static func load() throws -> PluralReference {
        try parse(String(decoding: FileIO.read(path), as: UTF8.self))
    }

    static func parse(_ text: String) throws -> PluralReference {
        let letters: [Character: PluralCategory] = [
            "z": .zero, "o": .one, "t": .two, "f": .few, "m": .many, "x": .other,
        ]
        var cldr = "", babel = ""
        var values: [String] = []
        var patterns: [Int: [PluralCategory]] = [:]
        var locales: [(id: String, categories: [PluralCategory])] = []
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(separator: " ").map(String.init)
            switch fields[0] {
            case "cldr" where fields.count == 2: cldr = fields[1]
            case "babel" where fields.count == 2: babel = fields[1]
            case "values": values = Array(fields.dropFirst())
            case "pattern" where fields.count == 3:
                guard let id = Int(fields[1]) else { throw ParseError.malformed(line: number, "bad pattern number") }
                let categories = fields[2].compactMap { letters[$0] }
                guard categories.count == fields[2].count, categories.count == values.count else {
                    throw ParseError.malformed(line: number, "pattern \(id) does not give one category per value")
                }
                patterns[id] = categories
            default:
                guard fields.count == 2, let id = Int(fields[1]), let categories = patterns[id] else {
                    throw ParseError.malformed(line: number, "expected `LOCALE PATTERN`, found `\(line)`")
                }
                locales.append((fields[0], categories))
            }
        }
        return PluralReference(cldrVersion: cldr, babelVersion: babel, values: values, locales: locales)
    }
}

@Suite("CLDR plural rules against Babel")
struct CLDRReferenceTests {
    static let reference = Result { try PluralReference.load() }

    @Test("the reference comes from the same CLDR release and Babel as the generated tables")
    func sameRelease() throws {
        let reference = try Self.reference.get()
        #expect(reference.cldrVersion == CLDRData.version)
        #expect(reference.babelVersion == CLDRData.babelVersion)
        #expect(!CLDRData.version.isEmpty && CLDRData.version != "41")
        #expect(reference.locales.count > 1000, "Babel knows more than a thousand locales")
        #expect(reference.values.count > 250)
        #expect(reference.values.contains("1.0") && reference.values.contains("200"))
    }

    @Test("every locale Babel knows gets Babel's category for every reference value")
    func everyLocaleEveryValue() throws {
        let reference = try Self.reference.get()
        var checked = 0
        var failedLocales: [String] = []
        // Rules are shared by resolved locale, so each distinct set is evaluated once (debug builds are slow).
        var computed: [String: [PluralCategory]] = [:]
        for (id, expected) in reference.locales {
            // Babel's identifier both as a parsed tag and as the POSIX-style string PluralRules also takes.
            var lookups: [(String, PluralRules)] = []
            if id == "root" {
                lookups.append(("root", try #require(PluralRules(locale: "root"))))
            } else {
                guard let tag = LocaleTag(id) else {
                    Issue.record("\(id): not a locale tag")
                    continue
                }
                lookups.append(("tag \(tag)", PluralRules(tag: tag)))
                guard let byName = PluralRules(locale: id) else {
                    Issue.record("\(id): PluralRules(locale:) found no rules")
                    continue
                }
                lookups.append(("\"\(id)\"", byName))
            }
            for (how, rules) in lookups {
                let categories: [PluralCategory]
                if let known = computed[rules.resolvedLocale] {
                    categories = known
                } else {
                    categories = reference.values.map { rules.category(for: $0) }
                    computed[rules.resolvedLocale] = categories
                }
                var mismatches: [String] = []
                for (value, (want, got)) in zip(reference.values, zip(expected, categories)) where got != want {
                    mismatches.append("\(value): Babel \(want), Folio \(got)")
                }
                checked += expected.count
                if !mismatches.isEmpty {
                    failedLocales.append(id)
                    Issue.record(
                        """
                        \(id) via \(how) (rules of \(rules.resolvedLocale)): \(mismatches.count) mismatches, \
                        first \(mismatches.prefix(8).joined(separator: "; "))
                        """)
                }
                let unknown = Set(expected).subtracting(rules.categories)
                #expect(unknown.isEmpty, "\(id) via \(how): Babel uses \(unknown), not in \(rules.categories)")
            }
        }
        #expect(failedLocales.isEmpty)
        #expect(checked > 500_000)
    }

    @Test("reference anchors: Maltese two, English 1.0, Russian few, French many, Portuguese in Angola")
    func anchors() throws {
        let reference = try Self.reference.get()
        func category(_ locale: String, _ value: String) -> PluralCategory? {
            guard let row = reference.locales.first(where: { $0.id == locale }),
                let index = reference.values.firstIndex(of: value)
            else { return nil }
            return row.categories[index]
        }
        #expect(category("mt", "2") == .two)
        #expect(category("mt", "102") == .other)
        #expect(category("en", "1") == .one)
        #expect(category("en", "1.0") == .other)
        #expect(category("ru", "22") == .few)
        #expect(category("fr", "1000000") == .many)
        #expect(category("pt_AO", "0") == .other)
        #expect(category("pt", "0") == .one)
        #expect(category("iw", "2") == .two)
    }

    @Test("malformed reference lines are reported with their line number")
    func malformedReference() {
        #expect(throws: PluralReference.ParseError.self) {
            try PluralReference.parse("values 1 2\npattern 1 ox\npattern 2 o\n")
        }
        #expect(throws: PluralReference.ParseError.self) {
            try PluralReference.parse("values 1 2\npattern 1 ox\nen 7\n")
        }
        let ok = try? PluralReference.parse("# c\ncldr 47\nbabel 2\nvalues 1 2\npattern 1 ox\nen 1\n")
        #expect(ok?.locales.first?.categories == [.one, .other])
    }
}
