import FolioKit
import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// The documentation names what exists: the options it gives each program are in its --help,
/// the manifest's keys are the code's, the FolioKit guide's Swift is the code the tests compile,
/// and the README is short and links to every guide.
@Suite("the documentation names what exists")
struct DocsReferenceTests {
    // MARK: - Options


    static let programs = ["folio", "folio-build", "folio-edge"]

    /// Every `--long-option` a program's help texts (its subcommands' included) name.
    static func helpOptions(_ program: String) throws -> Set<String> {
        var options: Set<String> = ["--help"]
        for (_, text) in try HelpTextTests.allHelp(program) { options.formUnion(longOptions(text)) }
        return options
    }

    static func longOptions(_ text: some StringProtocol) -> Set<String> {
        var out: Set<String> = []
        let chars = Array(text.unicodeScalars)
        var i = 0
        while i + 2 < chars.count {
            if chars[i] == "-", chars[i + 1] == "-", i == 0 || !(chars[i - 1].properties.isAlphabetic || chars[i - 1] == "-"),
                chars[i + 2].properties.isLowercase
            {
                var j = i + 2
                while j < chars.count, chars[j].properties.isLowercase || chars[j].properties.numericType != nil || chars[j] == "-" { j += 1 }
                out.insert(String(String.UnicodeScalarView(chars[i..<j])))
                i = j
            } else {
                i += 1
            }
        }
        return out
    }

    /// The program a command word names: ours by name or by a path ending in it.
    static func program(_ word: Substring) -> String? {
        let name = word.split(separator: "/").last.map(String.init) ?? ""
        return programs.contains(name) ? name : nil
    }

    /// `(program, option, where)` for every long option the documentation gives one of our
    /// programs: in code blocks, each command's options (its continuation lines included, and
    /// the indented lines of a usage block), and in prose, code spans that start with a program.
    static func documentedOptions() throws -> [(String, String, String)] {
        var found: [(String, String, String)] = []
        // `pipes`: a `|` separates commands (in a usage block, alternatives: `a | b --x`).
        func scan(_ line: Substring, current: inout String?, at place: String, pipes: Bool) {
            // Another command after a separator starts from nothing.
            var text = String(line)
            if let hash = text.range(of: " #") { text = String(text[..<hash.lowerBound]) }
            for separator in ["&&", ";", "$(", "`", "(", ")"] + (pipes ? ["|"] : []) {
                text = text.replacingOccurrences(of: separator, with: " ; ")
            }
            for word in text.split(separator: " ") {
                if word == ";" { current = nil; continue }
                if let p = program(word) { current = p; continue }
                if let current, word.hasPrefix("--") || word.hasPrefix("[--") {
                    for option in longOptions(word) { found.append((current, option, place)) }
                }
            }
        }
        for file in Docs.files {
            for block in try Docs.blocks(file) where ["", "sh", "sh test", "console", "text"].contains(block.info) {
                var current: String?
                var continued = false
                for (n, raw) in block.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    var line = raw
                    if line.hasPrefix("$ ") { line = line.dropFirst(2) }
                    let indented = line.hasPrefix(" ") || line.hasPrefix("[")
                    if !continued && !indented { current = nil }
                    scan(line, current: &current, at: "\(file):\(block.line + 1 + n)", pipes: !block.info.isEmpty)
                    continued = line.hasSuffix("\\")
                }
            }
            // Code spans in prose (a span that starts with a program names its options).
            var inBlock = false
            for (n, line) in try Docs.text(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if line.hasPrefix("```") { inBlock.toggle(); continue }
                guard !inBlock else { continue }
                for (k, span) in line.split(separator: "`", omittingEmptySubsequences: false).enumerated() where k % 2 == 1 {
                    guard let first = span.split(separator: " ").first, program(first) != nil else { continue }
                    var current: String?
                    scan(span, current: &current, at: "\(file):\(n + 1)", pipes: true)
                }
            }
        }
        return found
    }

    @Test("every --option the documentation gives a program is in that program's --help")
    func optionsExist() throws {
        let documented = try Self.documentedOptions()
        #expect(documented.count > 200, "the scan finds the guides' options: \(documented.count)")
        var known: [String: Set<String>] = [:]
        for program in Self.programs { known[program] = try Self.helpOptions(program) }
        for (program, option, place) in documented where !known[program]!.contains(option) {
            Issue.record("\(place): \(program) has no \(option) (not in any of its --help texts)")
        }
    }

    @Test("the option scan attributes options to their program")
    func optionScan() throws {
        #expect(Self.longOptions("[--tls-cert PEM --tls-key PEM]... --port=0 a--b --x") == ["--tls-cert", "--tls-key", "--port", "--x"])
        #expect(Self.program("$(RELEASE)/folio-build") == "folio-build")
        #expect(Self.program("folio-edge") == "folio-edge")
        #expect(Self.program("folio-edgy") == nil)
    }

    // MARK: - The manifest's keys

    /// The first column of the Markdown table that follows `heading` in `file`, backquotes removed.
    static func tableKeys(_ file: String, after marker: String) throws -> [String] {
        let text = try Docs.text(file)
        guard let start = text.range(of: marker) else { throw HarnessError("\(file) has no \(marker)") }
        var keys: [String] = []
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("|") {
                inTable = true
                let cell = line.split(separator: "|", omittingEmptySubsequences: false)[1].trimmingCharacters(in: .whitespaces)
                if cell.hasPrefix("`") { keys.append(cell.trimmingCharacters(in: CharacterSet(charactersIn: "`"))) }
            } else if inTable {
                break
            }
        }
        return keys
    }

    /// A manifest with every optional field set, as its plist.
    static func fullManifest() throws -> [String: PlistValue] {
        let cache = Manifest.CacheHint(maxAge: 60, staleWhileRevalidate: 1, staleIfError: 2, immutable: true)
        var entry = Manifest.Entry(
            path: "a.plist", sha256: String(repeating: "0", count: 64), size: 1, gzipSize: 1, contentType: "application/x-plist",
            locale: "en", kind: "data", cache: cache, brSize: 1)
        entry.minimumAppVersion = "1.0"
        var manifest = Manifest(
            version: 1, createdAt: Date(timeIntervalSince1970: 0), sourceRevision: "r", history: String(repeating: "0", count: 32),
            notice: "n", expiresAt: Date(timeIntervalSince1970: 1), entries: [entry])
        manifest.minimumAppVersion = "1.0"
        manifest.maintenanceUntil = Date(timeIntervalSince1970: 2)
        manifest.channel = "beta"
        manifest.critical = true
        manifest.releases = [Release(id: 1, rolloutBasisPoints: 10, entries: [entry])]
        guard case .dict(let d) = manifest.plist else { throw HarnessError("a manifest's plist is not a dictionary") }
        // What the reader reads back is what was written.
        #expect(try Manifest(plist: manifest.plist).plist == manifest.plist)
        return d
    }

    @Test("docs/format.md's table of the manifest's keys is the code's, and so is the entries' one")
    func manifestKeys() throws {
        let d = try Self.fullManifest()
        let documented = try Self.tableKeys("docs/format.md", after: "<!-- the manifest's keys -->")
        #expect(documented.sorted() == d.keys.sorted(), "format.md's table against Manifest.plist")
        #expect(Set(documented).count == documented.count, "each key once")
        // The reader names the same keys (Manifest.init(plist:) reads `root["KEY"]`, or `int(root, "KEY", …)`).
        let source = String(decoding: try FileIO.read(Harness.repoRoot + "/Sources/FolioPublished/Manifest.swift"), as: UTF8.self)
        var read: Set<String> = []
        for opening in ["root[\"", "(root, \""] {
            for part in source.components(separatedBy: opening).dropFirst() { read.insert(String(part.prefix { $0 != "\"" })) }
        }
        #expect(read == Set(documented), "the keys init(plist:) reads")

        guard case .array(let entries) = d["entries"], case .dict(let entry) = entries.first else { throw HarnessError("no entry") }
        let entryKeys = try Self.tableKeys("docs/format.md", after: "<!-- an entry's keys -->")
        #expect(entryKeys.sorted() == entry.keys.sorted(), "format.md's table of an entry's keys against Manifest.Entry.plist")
        // One table: no other document lists the manifest's keys in a table of its own.
        for file in Docs.files where file != "docs/format.md" {
            let text = try Docs.text(file)
            #expect(!(text.contains("| `schemaVersion` |") && text.contains("| `cacheHints` |")), "\(file) repeats the manifest's table")
        }
    }

    // MARK: - The FolioKit guide's code

    /// The regions of the compiled file, by name, less their common indentation.
    static func compiledRegions() throws -> [String: String] {
        let text = String(decoding: try FileIO.read(Harness.repoRoot + "/Tests/IntegrationTests/FolioKitGuideCode.swift"), as: UTF8.self)
        var regions: [String: [Substring]] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// guide: begin ") { current = String(trimmed.dropFirst("// guide: begin ".count)); regions[current!] = []; continue }
            if trimmed.hasPrefix("// guide: end ") { current = nil; continue }
            if let current { regions[current]!.append(line) }
        }
        return regions.mapValues { lines in
            let indent = lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
            return lines.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
        }
    }

    @Test("docs/foliokit.md's Swift is the code the tests compile")
    func folioKitSnippets() throws {
        let regions = try Self.compiledRegions()
        let swiftBlocks = try Docs.blocks("docs/foliokit.md").filter { $0.info == "swift" }
        #expect(swiftBlocks.count >= 3)
        var seen: Set<String> = []
        for block in swiftBlocks {
            let marker = block.before.trimmingCharacters(in: .whitespaces)
            guard marker.hasPrefix("<!-- compiled: "), marker.hasSuffix(" -->") else {
                Issue.record("docs/foliokit.md:\(block.line): a swift block without <!-- compiled: NAME --> before it")
                continue
            }
            let name = String(marker.dropFirst("<!-- compiled: ".count).dropLast(" -->".count))
            seen.insert(name)
            guard let region = regions[name] else { Issue.record("docs/foliokit.md:\(block.line): no region \(name)"); continue }
            #expect(block.text == region, "docs/foliokit.md:\(block.line) differs from FolioKitGuideCode.swift's region \(name)")
        }
        #expect(seen == Set(regions.keys), "every compiled region is shown in the guide")
        // Swift elsewhere would go uncompiled: it belongs in the FolioKit guide, or in a region.
        for file in Docs.files where file != "docs/foliokit.md" {
            for block in try Docs.blocks(file) where block.info == "swift" {
                Issue.record("\(file):\(block.line): a swift block outside docs/foliokit.md is not compiled by any test")
            }
        }
    }

    // MARK: - The README

    @Test("the README is short, repeats no section and links to every guide")
    func readme() throws {
        let text = try Docs.text("README.md")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 251, "README.md has \(lines.count) lines")
        for file in Docs.files {
            let prose = try Docs.prose(file)
            let headings = prose.split(separator: "\n").filter { $0.hasPrefix("#") }
            #expect(Set(headings).count == headings.count, "\(file) repeats a heading")
            // Every relative link leads to a file that exists.
            let base = (file as NSString).deletingLastPathComponent
            for part in prose.components(separatedBy: "](").dropFirst() {
                let target = String(part.prefix { $0 != ")" && $0 != "#" })
                guard !target.isEmpty, !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                let path = Harness.repoRoot + "/" + (base.isEmpty ? target : base + "/" + target)
                #expect(FileManager.default.fileExists(atPath: path), "\(file) links to \(target), which does not exist")
            }
        }
        for guide in Docs.files where guide.hasPrefix("docs/") {
            #expect(text.contains("](\(guide))"), "README.md links to \(guide)")
        }
    }
}

