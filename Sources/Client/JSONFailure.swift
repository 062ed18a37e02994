import FolioPlist
import Foundation

/// The one JSON document a `--json` command prints when it fails: `result` (by the exit code,
/// as in docs/exit-codes.md) and `error` with the exit code and the message.
enum JSONFailure {
    /// Whether the command line asks for JSON (`--json` before any `--`). `diff` has its own
    /// `--format json` and reports its own errors.
    static func requested(_ arguments: [String]) -> Bool {
        let args = arguments.dropFirst().prefix { $0 != "--" }
        return args.contains("--json") && !args.contains("diff")
    }

    /// The `result` a failure with exit code `code` is reported as.
    static func result(exitCode code: Int32) -> String {
        switch code {
        case 3: "offline"
        case 4: "maintenance"
        case 5: "updateRequired"
        case 10...17: "refused"
        default: "error"
        }
    }

    /// `{"result": …, "error": {"code": …, "message": …}}`, the `kind` of a FolioKit error too.
    static func document(exitCode: Int32, message: String, kind: String? = nil) -> PlistValue {
        attach(to: ["result": .string(result(exitCode: exitCode))], exitCode: exitCode, message: message, kind: kind)
    }

    /// `fields` with the `error` object of a failure added.
    static func attach(to fields: [String: PlistValue], exitCode: Int32, message: String, kind: String? = nil) -> PlistValue {
        var error: [String: PlistValue] = ["code": .int(Int64(exitCode)), "message": .string(message)]
        if let kind { error["kind"] = .string(kind) }
        var d = fields
        d["error"] = .dict(error)
        return .dict(d)
    }

    /// Prints the failure's document on standard output when the command line asked for JSON.
    static func printIfRequested(exitCode: Int32, message: String, kind: String? = nil) {
        guard exitCode != 0, requested(CommandLine.arguments) else { return }
        print(document(exitCode: exitCode, message: message, kind: kind))
    }

    static func print(_ value: PlistValue) {
        guard let bytes = try? JSONPlist.encode(value) else { return }
        FileHandle.standardOutput.write(Data(bytes))
    }
}
