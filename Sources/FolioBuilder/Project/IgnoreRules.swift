/// The patterns of `content/.folioignore`, in gitignore's syntax: one glob a line, `#` comments,
/// `!` to publish again what an earlier line ignored, a trailing `/` for folders only, a `/`
/// inside to anchor the pattern at the content folder (else it matches a name at any depth).
package struct IgnoreRules: Sendable {
    private struct Rule: Sendable {
        var glob: Glob
        var negated: Bool
        var foldersOnly: Bool
        var anchored: Bool
    }

    private var rules: [Rule] = []

    package init() {}

    /// Reads the file's text; a malformed pattern is a diagnostic at its line.
    package init(text: String, path: String, into diags: inout Diagnostics) {
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            while line.last == " ", !line.hasSuffix("\\ ") { line = line.dropLast() }
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let negated = line.hasPrefix("!")
            if negated { line = line.dropFirst() }
            let foldersOnly = line.hasSuffix("/")
            if foldersOnly { line = line.dropLast() }
            let anchored = line.dropLast().contains("/")
            if line.hasPrefix("/") { line = line.dropFirst() }
            do {
                rules.append(Rule(glob: try Glob(String(line)), negated: negated, foldersOnly: foldersOnly, anchored: anchored))
            } catch {
                diags.error(path, n + 1, 1, "\(error); fix or remove the line")
            }
        }
    }

    /// Whether the file at `path` (relative to the content folder) is ignored: the last rule
    /// that matches it or one of its folders decides.
    package func ignores(_ path: String) -> Bool {
        guard !rules.isEmpty else { return false }
        let segments = path.split(separator: "/")
        var ignored = false
        for rule in rules where Self.matches(rule, segments) { ignored = !rule.negated }
        return ignored
    }

    private static func matches(_ rule: Rule, _ segments: [Substring]) -> Bool {
        for end in 1...segments.count {
            let isFolder = end < segments.count
            if rule.foldersOnly && !isFolder { continue }
            let candidate = rule.anchored ? segments[0..<end].joined(separator: "/") : String(segments[end - 1])
            if rule.glob.matches(candidate) { return true }
        }
        return false
    }
}
