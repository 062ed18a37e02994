/// One problem in the content, at `path:line:col`, with what to do about it.
package struct Diagnostic: Sendable, Equatable, CustomStringConvertible {
    package enum Severity: String, Sendable { case error, warning }
    package var path: String
    package var line: Int
    package var column: Int
    package var severity: Severity
    package var message: String

    package var description: String { "\(path):\(line):\(column): \(severity.rawValue): \(message)" }
}

/// The problems found so far; a build with any error publishes nothing.
package struct Diagnostics: Sendable {
    package private(set) var all: [Diagnostic] = []
    /// `folio-build --strict`: every warning counts, and prints, as an error.
    package var strict = false

    package init() {}

    package var errorCount: Int { strict ? all.count : all.count { $0.severity == .error } }
    package var warningCount: Int { strict ? 0 : all.count { $0.severity == .warning } }

    package mutating func error(_ path: String, _ line: Int, _ column: Int, _ message: String) {
        all.append(Diagnostic(path: path, line: line, column: column, severity: .error, message: message))
    }

    package mutating func warning(_ path: String, _ line: Int, _ column: Int, _ message: String) {
        all.append(Diagnostic(path: path, line: line, column: column, severity: .warning, message: message))
    }

    /// Adds one diagnostic (one reported by an earlier build, shown again).
    package mutating func add(_ d: Diagnostic) { all.append(d) }

    /// Adds everything `other` found.
    package mutating func append(_ other: Diagnostics) { all += other.all }

    /// The diagnostics in file, line, column order (a stable sort: the order found at one position).
    package var sorted: [Diagnostic] {
        all.sorted { ($0.path, $0.line, $0.column) < ($1.path, $1.line, $1.column) }.map { d in
            guard strict, d.severity == .warning else { return d }
            var promoted = d
            promoted.severity = .error
            promoted.message += " [warning; an error with --strict]"
            return promoted
        }
    }
}
