import FolioSupport
import FolioTestSupport
import Foundation

/// One fenced block of a Markdown file.
struct DocBlock {
    /// The file, relative to the repository (`docs/serving.md`).
    var file: String
    /// The line of the opening fence, 1-based.
    var line: Int
    /// What follows the opening fence (`sh test`, `swift`, ``).
    var info: String
    var text: String
    /// The Markdown line just before the fence (a `<!-- compiled: NAME -->` marker).
    var before: String
}

/// The documentation as the tests read it: README.md and docs/*.md, their fenced blocks and
/// inline code.
enum Docs {
    /// README.md, then every docs/*.md, relative to the repository.
    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: Harness.repoRoot + "/docs")) ?? []
        return ["README.md"] + names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    static func text(_ file: String) throws -> String {
        String(decoding: try FileIO.read(Harness.repoRoot + "/" + file), as: UTF8.self)
    }

    /// The fenced blocks of `file` (``` fences, as this documentation writes them), in order.
    static func blocks(_ file: String) throws -> [DocBlock] {
        var out: [DocBlock] = []
        var open: DocBlock?
        var previous = ""
        for (index, line) in try text(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                if var block = open {
                    block.text = String(block.text.dropLast())
                    out.append(block)
                    open = nil
                } else {
                    open = DocBlock(file: file, line: index + 1, info: String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), text: "", before: previous)
                }
            } else if open != nil {
                open!.text += line + "\n"
            }
            previous = String(line)
        }
        return out
    }

    /// The text of `file` outside its fenced blocks.
    static func prose(_ file: String) throws -> String {
        var out = ""
        var inBlock = false
        for line in try text(file).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock.toggle(); continue }
            if !inBlock { out += line + "\n" }
        }
        return out
    }
}
