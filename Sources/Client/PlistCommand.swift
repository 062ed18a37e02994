import ArgumentParser
import FolioPlist
import FolioPlistXML
import FolioSupport
import Foundation

/// `folio plist`: plutil's job on Linux.
struct PlistCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plist",
        abstract: "Print and convert property lists (binary, XML or JSON).",
        subcommands: [Print.self, Convert.self])

    struct Print: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "print", abstract: "Print a property list as readable text.")

        @Argument(help: "The plist file to print ('-' for standard input).") var file: String
        @Flag(help: "Print JSON instead of readable text.") var json = false

        func run() async throws {
            let value = try readPlist(file)
            if json {
                let bytes = try mapError(file) { () throws(PlistError) in try JSONPlist.encode(value, nulls: true) }
                FileHandle.standardOutput.write(Data(bytes))
            } else {
                FileHandle.standardOutput.write(Data(value.readableText(nulls: true).utf8))
            }
        }
    }

    struct Convert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "convert", abstract: "Convert a property list between binary, XML and JSON.")

        @Option(help: "The output format: binary, xml or json.") var to: Format
        @Argument(help: "The input file ('-' for standard input); any format.") var input: String
        @Argument(help: "The output file ('-' for standard output).") var output: String

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case binary, xml, json
            var plistFormat: PlistFormat { PlistFormat(rawValue: rawValue)! }
        }

        func run() async throws {
            let value = try readPlist(input)
            let bytes = try mapError(output) { () throws(PlistError) in try value.encoded(as: to.plistFormat) }
            if output == "-" {
                FileHandle.standardOutput.write(Data(bytes))
            } else {
                do { try FileIO.writeAtomically(bytes, to: output) } catch { throw CLIError("\(error)") }
            }
        }
    }
}

/// Reads and decodes a plist file, turning failures into one clear line.
func readPlist(_ path: String) throws -> PlistValue {
    let bytes: [UInt8]
    if path == "-" {
        bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
    } else {
        do { bytes = try FileIO.read(path) } catch { throw CLIError("\(error)") }
    }
    return try mapError(path) { () throws(PlistError) in try PlistValue.decodeAnyFormat(bytes) }
}

func mapError<T>(_ path: String, _ body: () throws(PlistError) -> T) throws -> T {
    do { return try body() } catch { throw CLIError("\(path): \(error)") }
}

/// A failure reported as `folio: error: …` with exit code 1.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32 = 1
    /// The FolioKit error code's name (`edgeUnreachable`), for `--json`.
    var kind: String?
    init(_ description: String, exitCode: Int32 = 1, kind: String? = nil) {
        self.description = description
        self.exitCode = exitCode
        self.kind = kind
    }
}
