/// A path glob as the project file and `.folioignore` write them: `*` within one segment, `**`
/// across segments, `?` one character, `[abc]`/`[a-z]`/`[!a]` classes, `{a,b}` alternatives.
package struct Glob: Sendable, Equatable, CustomStringConvertible {
    package let pattern: String
    private let alternatives: [[Token]]

    private enum Token: Sendable, Equatable {
        case literal(Character)
        case any  // ?
        case star  // *
        case globstar  // **/ or a trailing **
        case set([ClosedRange<Character>], negated: Bool)
    }

    /// Compiles `pattern`; nil with the reason when it is malformed.
    package init(_ pattern: String) throws(GlobError) {
        self.pattern = pattern
        alternatives = try Self.expandBraces(pattern).map { alt throws(GlobError) in try Self.tokens(alt, pattern) }
    }

    package var description: String { pattern }

    /// Whether `path` (segments separated by `/`) matches the whole pattern.
    package func matches(_ path: String) -> Bool {
        let chars = Array(path)
        return alternatives.contains { Self.match($0, chars) }
    }

    private static func expandBraces(_ s: String) throws(GlobError) -> [String] {
        guard let open = s.firstIndex(of: "{") else { return [s] }
        var depth = 0
        var close: String.Index?
        var commas: [String.Index] = []
        for i in s[open...].indices {
            switch s[i] {
            case "{": depth += 1
            case "}":
                depth -= 1
                if depth == 0 { close = i }
            case "," where depth == 1: commas.append(i)
            default: break
            }
            if close != nil { break }
        }
        guard let close else { throw GlobError(pattern: s, message: "an unclosed '{'") }
        var parts: [String] = []
        var start = s.index(after: open)
        for c in commas + [close] {
            parts.append(String(s[start..<c]))
            start = s.index(after: c)
        }
        let prefix = String(s[..<open])
        let suffix = String(s[s.index(after: close)...])
        var out: [String] = []
        for part in parts {
            for rest in try expandBraces(part + suffix) { out.append(prefix + rest) }
        }
        guard out.count <= 256 else { throw GlobError(pattern: s, message: "too many '{…}' alternatives (over 256)") }
        return out
    }

    private static func tokens(_ s: String, _ whole: String) throws(GlobError) -> [Token] {
        var out: [Token] = []
        let c = Array(s)
        var i = 0
        while i < c.count {
            switch c[i] {
            case "*":
                if i + 1 < c.count, c[i + 1] == "*", i == 0 || c[i - 1] == "/" {
                    if i + 2 == c.count { out.append(.globstar); i += 2; continue }
                    if c[i + 2] == "/" { out.append(.globstar); i += 3; continue }
                }
                if out.last != .star { out.append(.star) }  // a run of `*` is one `*`
            case "?": out.append(.any)
            case "[":
                let (token, next) = try set(c, from: i, whole)
                out.append(token)
                i = next
                continue
            case "\\" where i + 1 < c.count:
                i += 1
                out.append(.literal(c[i]))
            default: out.append(.literal(c[i]))
            }
            i += 1
        }
        return out
    }

    private static func set(_ c: [Character], from start: Int, _ whole: String) throws(GlobError) -> (Token, Int) {
        var i = start + 1
        var negated = false
        if i < c.count, c[i] == "!" || c[i] == "^" { negated = true; i += 1 }
        var ranges: [ClosedRange<Character>] = []
        var first = true
        while i < c.count, c[i] != "]" || first {
            first = false
            if i + 2 < c.count, c[i + 1] == "-", c[i + 2] != "]" {
                guard c[i] <= c[i + 2] else { throw GlobError(pattern: whole, message: "the range [\(c[i])-\(c[i + 2])] is backwards") }
                ranges.append(c[i]...c[i + 2])
                i += 3
            } else {
                ranges.append(c[i]...c[i])
                i += 1
            }
        }
        guard i < c.count else { throw GlobError(pattern: whole, message: "an unclosed '['") }
        return (.set(ranges, negated: negated), i + 1)
    }

    /// Matches by backtracking over (token, character) positions, remembering the positions that
    /// failed, so a pattern such as `*a*a*a*b` or a run of `*` stays polynomial in the path length.
    private static func match(_ tokens: [Token], _ chars: [Character]) -> Bool {
        var matcher = Matcher(tokens: tokens, chars: chars)
        return matcher.match(0, 0)
    }

    private struct Matcher {
        let tokens: [Token]
        let chars: [Character]
        var failed: Set<Int> = []

        init(tokens: [Token], chars: [Character]) {
            self.tokens = tokens
            self.chars = chars
        }

        mutating func match(_ pi: Int, _ si: Int) -> Bool {
            let key = pi * (chars.count + 1) + si
            if failed.contains(key) { return false }
            let result = step(pi, si)
            if !result { failed.insert(key) }
            return result
        }

        private mutating func step(_ pi: Int, _ si: Int) -> Bool {
            guard pi < tokens.count else { return si == chars.count }
            let ch: Character? = si < chars.count ? chars[si] : nil
            switch tokens[pi] {
            case .literal(let want):
                return ch == want && match(pi + 1, si + 1)
            case .any:
                guard let ch, ch != "/" else { return false }
                return match(pi + 1, si + 1)
            case .set(let ranges, let negated):
                guard let ch, ch != "/", ranges.contains(where: { $0.contains(ch) }) != negated else { return false }
                return match(pi + 1, si + 1)
            case .star:
                // Zero or more characters within the segment.
                var t = si
                while true {
                    if match(pi + 1, t) { return true }
                    guard t < chars.count, chars[t] != "/" else { return false }
                    t += 1
                }
            case .globstar:
                // Zero or more whole segments.
                var t = si
                while true {
                    if match(pi + 1, t) { return true }
                    guard let slash = chars[t...].firstIndex(of: "/") else { return pi + 1 == tokens.count }
                    t = slash + 1
                }
            }
        }
    }
}

/// A glob that cannot be compiled.
package struct GlobError: Error, Sendable, CustomStringConvertible {
    package var pattern: String
    package var message: String
    package var description: String { "the pattern \"\(pattern)\" has \(message)" }
}
