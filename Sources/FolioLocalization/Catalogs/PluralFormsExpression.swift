/// A parsed gettext `Plural-Forms` header value (`nplurals=N; plural=EXPR;`) that maps a count to a translation index.
public struct PluralFormsExpression: Sendable, Equatable {
    /// The header value as written, trimmed (what a compiled catalog records).
    public let text: String
    /// How many plural forms the language has (the number of `msgstr[n]` each plural entry needs).
    public let nplurals: Int
    let root: Node

    /// The longest header value accepted, in bytes.
    package static let maxLength = 4096
    /// The deepest expression nesting accepted.
    package static let maxDepth = 64

    indirect enum Node: Sendable, Equatable {
        case number(UInt64)
        case n
        case not(Node)
        case binary(Op, Node, Node)
        case ternary(Node, Node, Node)
    }

    enum Op: String, Sendable { case mul = "*", div = "/", mod = "%", add = "+", sub = "-", lt = "<", le = "<=", gt = ">", ge = ">=", eq = "==", ne = "!=", and = "&&", or = "||" }

    /// Parses a `Plural-Forms` value, throwing a diagnostic (line 1, with the column) if it is malformed.
    public init(_ header: String) throws(CatalogDiagnostic) {
        var p = Parser(Array(header.utf8))
        guard p.s.count <= Self.maxLength else {
            throw CatalogDiagnostic(line: 1, column: 1, message: "Plural-Forms is longer than \(Self.maxLength) bytes; use the standard expression for the language")
        }
        p.skipSpace()
        try p.keyword("nplurals")
        try p.expect("=")
        p.skipSpace()
        let col = p.i + 1
        guard let count = p.integer(), count >= 1, count <= 100 else {
            throw CatalogDiagnostic(line: 1, column: col, message: "nplurals must be an integer from 1 to 100, as in nplurals=2;")
        }
        try p.expect(";")
        p.skipSpace()
        try p.keyword("plural")
        try p.expect("=")
        let root = try p.ternary()
        p.skipSpace()
        if p.peek() == UInt8(ascii: ";") { p.i += 1 }
        p.skipSpace()
        guard p.i == p.s.count else {
            throw p.fail("unexpected '\(p.describe())' after the plural expression; end it with ';'")
        }
        self.nplurals = Int(count)
        self.text = String(header.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        self.root = root
    }

    /// The translation index (0..<nplurals) for the count `n`; never traps.
    public func index(for n: UInt64) -> Int {
        let v = Self.evaluate(root, n)
        return v >= UInt64(nplurals) ? nplurals - 1 : Int(v)
    }

    static func evaluate(_ node: Node, _ n: UInt64) -> UInt64 {
        switch node {
        case .number(let v): return v
        case .n: return n
        case .not(let a): return evaluate(a, n) == 0 ? 1 : 0
        case .ternary(let c, let a, let b): return evaluate(c, n) != 0 ? evaluate(a, n) : evaluate(b, n)
        case .binary(let op, let a, let b):
            let x = evaluate(a, n)
            switch op {
            case .and: return x != 0 && evaluate(b, n) != 0 ? 1 : 0
            case .or: return x != 0 || evaluate(b, n) != 0 ? 1 : 0
            default: break
            }
            let y = evaluate(b, n)
            switch op {
            case .mul: return x &* y
            case .div: return y == 0 ? 0 : x / y
            case .mod: return y == 0 ? 0 : x % y
            case .add: return x &+ y
            case .sub: return x &- y
            case .lt: return x < y ? 1 : 0
            case .le: return x <= y ? 1 : 0
            case .gt: return x > y ? 1 : 0
            case .ge: return x >= y ? 1 : 0
            case .eq: return x == y ? 1 : 0
            case .ne: return x != y ? 1 : 0
            case .and, .or: return 0
            }
        }
    }

    struct Parser {
        let s: [UInt8]
        var i = 0
        var depth = 0

        init(_ s: [UInt8]) { self.s = s }

        func peek(_ k: Int = 0) -> UInt8? { i + k < s.count ? s[i + k] : nil }

        func describe() -> String {
            guard let c = peek() else { return "end of text" }
            return String(decoding: [c], as: UTF8.self)
        }

        func fail(_ message: String) -> CatalogDiagnostic {
            CatalogDiagnostic(line: 1, column: i + 1, message: message)
        }

        mutating func skipSpace() {
            while let c = peek(), c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { i += 1 }
        }

        mutating func keyword(_ word: String) throws(CatalogDiagnostic) {
            skipSpace()
            let w = Array(word.utf8)
            guard i + w.count <= s.count, Array(s[i..<i + w.count]) == w else {
                throw fail("expected '\(word)=' here; Plural-Forms looks like nplurals=2; plural=(n != 1);")
            }
            i += w.count
        }

        mutating func expect(_ token: String) throws(CatalogDiagnostic) {
            skipSpace()
            let w = Array(token.utf8)
            guard i + w.count <= s.count, Array(s[i..<i + w.count]) == w else {
                throw fail("expected '\(token)' but found '\(describe())'")
            }
            i += w.count
        }

        mutating func integer() -> UInt64? {
            var v: UInt64 = 0
            var digits = 0
            while let c = peek(), c >= 0x30 && c <= 0x39 {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(UInt64(c - 0x30))
                if o1 || o2 { return nil }
                v = a
                i += 1
                digits += 1
            }
            return digits > 0 ? v : nil
        }

        mutating func enter() throws(CatalogDiagnostic) {
            depth += 1
            if depth > PluralFormsExpression.maxDepth {
                throw fail("plural expression is nested more than \(PluralFormsExpression.maxDepth) levels deep; simplify it")
            }
        }

        /// Matches one of `ops` (longest first) at the cursor, without consuming a prefix of a longer operator.
        mutating func match(_ ops: [Op]) -> Op? {
            skipSpace()
            for op in ops.sorted(by: { $0.rawValue.count > $1.rawValue.count }) {
                let w = Array(op.rawValue.utf8)
                guard i + w.count <= s.count, Array(s[i..<i + w.count]) == w else { continue }
                // `<` must not swallow `<=`, `=` alone is not `==`, `!` alone is not `!=`.
                i += w.count
                return op
            }
            return nil
        }

        mutating func ternary() throws(CatalogDiagnostic) -> Node {
            try enter()
            defer { depth -= 1 }
            let cond = try binary(0)
            skipSpace()
            guard peek() == UInt8(ascii: "?") else { return cond }
            i += 1
            let a = try ternary()
            skipSpace()
            guard peek() == UInt8(ascii: ":") else {
                throw fail("expected ':' of the '?:' operator but found '\(describe())'")
            }
            i += 1
            let b = try ternary()
            return .ternary(cond, a, b)
        }

        static let levels: [[Op]] = [[.or], [.and], [.eq, .ne], [.lt, .le, .gt, .ge], [.add, .sub], [.mul, .div, .mod]]

        mutating func binary(_ level: Int) throws(CatalogDiagnostic) -> Node {
            guard level < Self.levels.count else { return try unary() }
            var lhs = try binary(level + 1)
            var chain = 0
            while let op = match(Self.levels[level]) {
                chain += 1
                if depth + chain > PluralFormsExpression.maxDepth {
                    throw fail("plural expression is nested more than \(PluralFormsExpression.maxDepth) levels deep; simplify it")
                }
                let rhs = try binary(level + 1)
                lhs = .binary(op, lhs, rhs)
            }
            return lhs
        }

        mutating func unary() throws(CatalogDiagnostic) -> Node {
            skipSpace()
            if peek() == UInt8(ascii: "!"), peek(1) != UInt8(ascii: "=") {
                i += 1
                try enter()
                defer { depth -= 1 }
                return .not(try unary())
            }
            return try primary()
        }

        mutating func primary() throws(CatalogDiagnostic) -> Node {
            skipSpace()
            guard let c = peek() else { throw fail("the plural expression ends too early; expected a number, 'n' or '('") }
            if c == UInt8(ascii: "n") {
                i += 1
                return .n
            }
            if c >= 0x30 && c <= 0x39 {
                let start = i
                guard let v = integer() else {
                    i = start
                    throw fail("integer literal is too large")
                }
                return .number(v)
            }
            if c == UInt8(ascii: "(") {
                i += 1
                let inner = try ternary()
                skipSpace()
                guard peek() == UInt8(ascii: ")") else { throw fail("expected ')' to close the parenthesis but found '\(describe())'") }
                i += 1
                return inner
            }
            throw fail("expected a number, 'n' or '(' but found '\(describe())'")
        }
    }
}
