import FolioPublished

/// A diff side as written: the base spec, its channel (`#beta`) and release (`+3`).
struct DiffTarget {
    var base: String
    var channel = Channel.production
    var release: Int?

    init(_ spec: String, edge: String) throws {
        var text = Substring(spec)
        if let plus = text.lastIndex(of: "+"), let n = Int(text[text.index(after: plus)...]) {
            guard n >= 1 else { throw CLIError("'\(spec)': +N names a release by its id, 1 or more", exitCode: 2) }
            release = n
            text = text[..<plus]
        }
        if let hash = text.lastIndex(of: "#") {
            let name = String(text[text.index(after: hash)...])
            guard Channel.isValidName(name) else { throw CLIError("'\(spec)': \(Channel.problem(name))", exitCode: 2) }
            channel = name
            text = text[..<hash]
        }
        base = text.isEmpty ? edge : String(text)
    }
}
