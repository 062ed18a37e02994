import FolioFuzzTargets
import Foundation
import Testing

/// Every committed seed (`Fuzz/Corpus/<target>/`) and crash reproducer (`Fuzz/Regressions/<target>/`)
/// replayed through its fuzz target, in the normal build: a crash the fuzzer found stays fixed.
@Suite("Fuzz corpora and crash reproducers")
struct FuzzCorpusTests {
    /// The repository's Fuzz/ directory (this file is Tests/FuzzTargetTests/FuzzCorpusTests.swift).
    static let fuzzDir: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Fuzz")
    }()

    static let targetNames = FuzzTargets.all.map(\.name)

    /// The files of `Fuzz/<kind>/<target>/`, sorted; none when the directory is absent.
    static func inputs(_ kind: String, _ target: String) -> [URL] {
        let dir = fuzzDir.appendingPathComponent(kind).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { dir.appendingPathComponent($0) }
    }

    @Test("every target has a seed corpus of small files", arguments: targetNames)
    func seedCorpus(_ target: String) throws {
        let files = Self.inputs("Corpus", target)
        #expect(!files.isEmpty, "Fuzz/Corpus/\(target) has no seeds")
        let fuzz = try #require(FuzzTargets.named(target))
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            #expect(bytes.count <= 16 * 1024, "\(file.lastPathComponent) is \(bytes.count) bytes; keep seeds small")
            fuzz(bytes)
        }
    }

    @Test("crash reproducers no longer crash", arguments: targetNames)
    func regressions(_ target: String) throws {
        let fuzz = try #require(FuzzTargets.named(target))
        for file in Self.inputs("Regressions", target) {
            fuzz(try [UInt8](Data(contentsOf: file)))
        }
    }

    @Test("corpus and regression directories name targets")
    func directoriesNameTargets() {
        for kind in ["Corpus", "Regressions"] {
            let dir = Self.fuzzDir.appendingPathComponent(kind)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            for name in names where !name.hasPrefix(".") {
                #expect(Self.targetNames.contains(name), "Fuzz/\(kind)/\(name) is not a fuzz target")
            }
        }
    }
}
