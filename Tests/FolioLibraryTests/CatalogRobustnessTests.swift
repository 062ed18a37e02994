import FolioTestSupport
import Foundation
import Testing

@testable import FolioCatalogs
@testable import FolioLocalization
@testable import FolioSupport

/// Damaged catalogs: every parser answers with diagnostics at real positions, never a trap.
@Suite("catalog parsers on damaged input")
struct CatalogRobustnessTests {
    /// The repository's catalogs, by format.
    static let samples: [(name: String, parse: @Sendable ([UInt8]) -> ParsedCatalogFile, bytes: [UInt8])] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("content/catalogs").path
        func read(_ p: String) -> [UInt8] { (try? FileIO.read(root + "/" + p)) ?? [] }
        return [
            ("strings (UTF-8)", StringsFile.parseCatalog, read("en/Localizable.strings")),
            ("strings (UTF-16)", StringsFile.parseCatalog, read("de/Localizable.strings")),
            ("stringsdict", StringsDictFile.parse, read("cy/Localizable.stringsdict")),
            ("xcstrings", XCStringsFile.parse, read("Localizable.xcstrings")),
            ("xliff 1.2", XLIFFFile.parse, read("Localizable.xliff")),
            ("xliff 2.0", XLIFFFile.parse, read("Localizable.pt-BR.xlf")),
            ("po", POFile.parseCatalog, read("ar/Localizable.po")),
        ]
    }()

    /// One seeded damage: truncation, a flipped byte, a deleted run, or an inserted quote, bracket or brace.
    static func damage(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var b = bytes
        guard !b.isEmpty else { return b }
        let at = Int(rng.next() % UInt64(b.count))
        switch rng.next() % 4 {
        case 0: b.removeSubrange(at...)
        case 1: b[at] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
        case 2: b.removeSubrange(at..<min(b.count, at + 1 + Int(rng.next() % 64)))
        default: b.insert([UInt8(ascii: "\""), UInt8(ascii: "<"), UInt8(ascii: "{"), UInt8(ascii: "%"), 0][Int(rng.next() % 5)], at: at)
        }
        return b
    }

    @Test("300 damaged variants of each real catalog: diagnostics at valid positions, no trap")
    func damagedCatalogs() {
        for sample in Self.samples {
            #expect(!sample.bytes.isEmpty, "\(sample.name): sample missing")
            let clean = sample.parse(sample.bytes)
            #expect(clean.errors.isEmpty, "\(sample.name): \(clean.errors.prefix(3))")
            let lines = sample.bytes.count { $0 == 0x0A } + 2
            var rng = SplitMix64(seed: 0xCA7A_1065)
            var failed = 0
            for _ in 0..<300 {
                let damaged = Self.damage(sample.bytes, &rng)
                let result = sample.parse(damaged)
                if !result.errors.isEmpty { failed += 1 }
                for d in result.errors + result.warnings {
                    #expect(d.line >= 1 && d.line <= lines && d.column >= 1, "\(sample.name): \(d)")
                }
            }
            // Most damage is noticed (some, like a flipped letter inside a translation, is not damage to the format).
            #expect(failed > 30, "\(sample.name): only \(failed) of 300 damaged variants were reported")
        }
    }
}
