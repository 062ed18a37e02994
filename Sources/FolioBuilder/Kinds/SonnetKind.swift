import FolioCatalogs
import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport

/// One sonnet as authored in `content/sonnets/NNN.txt`.
package struct Sonnet: Sendable, Equatable {
    package var number: Int
    package var lines: [String]
    /// Where it came from, for diagnostics.
    package var path: String

    package var roman: String { RomanNumeral.format(number) }

    /// The sonnet as its own object: `number`, `roman`, `lines`.
    package var plist: PlistValue {
        .dict(["number": .int(Int64(number)), "roman": .string(roman), "lines": .array(lines.map { .string($0) })])
    }

    /// The light entry a reading screen lists first.
    package var indexPlist: PlistValue {
        .dict([
            "number": .int(Int64(number)), "roman": .string(roman),
            "firstLine": .string(lines.first ?? ""),
            "preview": .array(lines.prefix(3).map { .string($0) }),
        ])
    }
}

/// Parses and checks sonnet files; every problem becomes a diagnostic with its position.
package enum SonnetSource {
    package static let howToFormat = "a sonnet file is its Roman numeral, a blank line, then the poem's lines"

    /// Parses one file. Returns nil (with diagnostics) when it cannot be used.
    package static func parse(path: String, fileNumber: Int, bytes: [UInt8], into diags: inout Diagnostics) -> Sonnet? {
        if let bad = UTF8Validation.firstInvalidOffset(bytes) {
            let (line, col) = UTF8Validation.position(of: bad, in: bytes)
            let hex = String(bytes[bad], radix: 16, uppercase: true)
            diags.error(path, line, col, "invalid UTF-8 (byte 0x\(hex)); save the file as UTF-8")
            return nil
        }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasSuffix("\r") ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard lines.contains(where: { !$0.allSatisfy(\.isWhitespace) }) else {
            diags.error(path, 1, 1, "the file is empty; \(howToFormat)")
            return nil
        }
        let expected = RomanNumeral.format(fileNumber)
        let header = lines[0].trimmingCharacters(in: .whitespaces)
        guard let number = RomanNumeral.parse(header), header == header.uppercased() else {
            let what = header.isEmpty ? "an empty line" : "\"\(header)\""
            diags.error(path, 1, 1, "missing numeral: expected the Roman numeral \(expected) on the first line, found \(what); \(howToFormat)")
            return nil
        }
        var ok = true
        if number != fileNumber {
            let name = threeDigits(number)
            diags.error(path, 1, 1, "numeral \(header) (\(number)) is out of order: this file holds sonnet \(fileNumber) (\(expected)); fix the numeral or rename the file to \(name).txt")
            ok = false
        }
        guard lines.count >= 2, lines[1].allSatisfy(\.isWhitespace) else {
            diags.error(path, 2, 1, "expected a blank line after the numeral \(header)")
            return nil
        }
        var poem: [String] = []
        var i = 2
        while i < lines.count, lines[i].allSatisfy(\.isWhitespace) { i += 1 }
        while i < lines.count, !lines[i].allSatisfy(\.isWhitespace) {
            poem.append(lines[i].trimmingCharacters(in: .whitespaces))
            i += 1
        }
        guard !poem.isEmpty else {
            diags.error(path, 1, 1, "sonnet \(header) has no lines; add the poem after the blank line")
            return nil
        }
        let lastPoemLine = i  // 1-based number of the poem's last line
        while i < lines.count {
            if !lines[i].allSatisfy(\.isWhitespace) {
                let col = (lines[i].firstIndex { !$0.isWhitespace }.map { lines[i].distance(from: lines[i].startIndex, to: $0) } ?? 0) + 1
                diags.error(path, i + 1, col, "stray line outside the sonnet: the poem ended at line \(lastPoemLine); remove the blank line above it or the line itself")
                ok = false
            }
            i += 1
        }
        return ok ? Sonnet(number: number, lines: poem, path: path) : nil
    }

    /// Checks the set of sonnets as a whole: no duplicates, no gaps.
    package static func checkSequence(_ sonnets: [Sonnet], into diags: inout Diagnostics) {
        var seen: [Int: String] = [:]
        for s in sonnets.sorted(by: { $0.path < $1.path }) {
            if let first = seen[s.number] {
                diags.error(s.path, 1, 1, "duplicate sonnet \(s.roman) (\(s.number)): already defined at \(first):1:1; remove one of them")
            } else {
                seen[s.number] = s.path
            }
        }
        guard let highest = seen.keys.max() else { return }
        for n in 1..<highest where seen[n] == nil {
            let next = seen.keys.filter { $0 > n }.min()!
            diags.error(seen[next]!, 1, 1, "sonnet \(RomanNumeral.format(n)) (\(n)) is missing before this one; add \(threeDigits(n)).txt")
        }
    }
}

/// A sonnet number padded to three digits, as sonnet file names are.
package func threeDigits(_ n: Int) -> String {
    let digits = String(n)
    return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
}

/// `content/sonnets/NNN.txt`: each sonnet as `sonnets/NNN.plist`, with the light
/// `sonnets/index.plist` and the whole collection in `sonnets/all.plist`.
package struct SonnetKind: ContentKind {
    package static let folder = "sonnets"
    package var name: String { "sonnet" }

    package init() {}

    package func claims(_ file: SourceFile) -> Bool { file.topFolder == Self.folder }

    package func parse(_ files: [SourceFile], _ project: BuildProject, into diags: inout Diagnostics) throws -> any ParsedContent {
        var sonnets: [Sonnet] = []
        for file in files {
            let stem = file.name.hasSuffix(".txt") ? String(file.name.dropLast(4)) : ""
            guard file.relativePath.split(separator: "/").count == 2, !stem.isEmpty, stem.allSatisfy(\.isASCII),
                stem.allSatisfy(\.isNumber), let number = Int(stem), number >= 1
            else {
                diags.error(file.fullPath, 1, 1, "unexpected file in \(project.config.contentDir)/\(Self.folder): sonnet files are named by number, like 018.txt")
                continue
            }
            if let s = SonnetSource.parse(path: file.fullPath, fileNumber: number, bytes: try file.read(), into: &diags) {
                sonnets.append(s)
            }
        }
        SonnetSource.checkSequence(sonnets, into: &diags)
        sonnets.sort { $0.number < $1.number }
        return CompiledContent(items(sonnets))
    }

    private func items(_ sonnets: [Sonnet]) -> [CompiledItem] {
        guard !sonnets.isEmpty else { return [] }
        let sources = sonnets.map(\.path)
        var out = sonnets.map { CompiledItem(path: Self.path($0.number), plist: $0.plist, kind: name, sources: [$0.path]) }
        out.append(CompiledItem(path: Self.folder + "/index.plist", plist: .array(sonnets.map(\.indexPlist)), kind: "index", sources: sources))
        out.append(CompiledItem(path: Self.folder + "/all.plist", plist: .array(sonnets.map(\.plist)), kind: name, sources: sources))
        return out
    }

    /// `sonnets/018.plist` for 18.
    package static func path(_ number: Int) -> String { "\(folder)/\(threeDigits(number)).plist" }
}
