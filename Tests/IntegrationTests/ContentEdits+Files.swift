import FolioPlist
import FolioSupport
import Foundation

/// Edits of source files: articles (front matter and body), a new article, the English
/// catalog's values, sonnets' lines, and removing the last sonnet.
extension ContentEdits {
    mutating func articleFile() throws -> String {
        let names = try FileIO.list(content + "/articles").filter { $0.hasSuffix(".md") }.sorted()
        return "articles/" + rng.pick(names)
    }

    mutating func articleFront() throws -> String {
        let path = try articleFile()
        let field = rng.pick(["title", "author"])
        var lines = try read(path).components(separatedBy: "\n")
        let end = lines.dropFirst().firstIndex(of: "---") ?? 1
        if let i = lines[1..<end].firstIndex(where: { $0.hasPrefix(field + ": ") }) {
            lines[i] = "\(field): Edited \(counter)"
        } else {
            lines.insert("\(field): Edited \(counter)", at: 1)
        }
        try write(path, lines.joined(separator: "\n"))
        return "\(path): \(field)"
    }

    mutating func articleBody() throws -> String {
        let path = try articleFile()
        try write(path, try read(path) + "\nParagraph \(counter), added.\n")
        return "\(path): body"
    }

    mutating func newArticle() throws -> String {
        let path = "articles/note-\(counter).md"
        let day = String(format: "%02d", 1 + counter % 28)
        try write(path, "---\ntitle: Note \(counter)\ndate: 2026-12-\(day)T10:00:00Z\n---\n# Note \(counter)\n\nText.\n")
        return "\(path): new"
    }

    mutating func catalogValue() throws -> String {
        let path = "catalogs/en/Localizable.strings"
        var lines = try read(path).components(separatedBy: "\n")
        let plain = lines.indices.filter { lines[$0].hasPrefix("\"") && lines[$0].hasSuffix("\";") && !lines[$0].contains("%") }
        let i = rng.pick(plain)
        let key = lines[i].prefix { $0 != "=" }
        lines[i] = key + "= \"Edited \(counter)\";"
        try write(path, lines.joined(separator: "\n"))
        return "\(path): \(key)"
    }

    mutating func sonnetLines() throws -> String {
        let path = "sonnets/" + ClientTest.threeDigits(rng.int(1...100)) + ".txt"
        let lines = try read(path).components(separatedBy: "\n")
        var poem: [PlistValue] = lines.dropFirst(2).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { .string($0) }
        var op = "change"
        if rng.chance(0.3) {
            poem[rng.int(0...(poem.count - 1))] = .string("A changed line \(counter),")
        } else {
            op = arrayEdit(&poem, minCount: 2, fresh: .string("An inserted line \(counter),"))
        }
        try write(path, ([lines[0], ""] + poem.compactMap(\.stringValue) + [""]).joined(separator: "\n"))
        return "\(path): lines \(op)"
    }

    mutating func removeSonnet() throws -> String {
        let path = "sonnets/" + ClientTest.threeDigits(lastSonnet) + ".txt"
        try FileManager.default.removeItem(atPath: content + "/" + path)
        lastSonnet -= 1
        return "\(path): removed"
    }
}
