import ArgumentParser
import FolioKitCore
import Foundation

@main
struct Folio: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio",
        abstract: "Read, sync and compare Folio content.",
        subcommands: [
            SyncCommand.self, ListCommand.self, LsCommand.self, ReadCommand.self, ShowCommand.self, GetCommand.self, StatusCommand.self,
            DiffCommand.self, StringsCommand.self, PlistCommand.self, KeysCommand.self,
        ])

    /// Accepted before the subcommand too (`folio --edge URL sync`); each subcommand reads them.
    @OptionGroup var options: ClientOptions

    /// Runs the parsed command; expected failures print one `folio: error:` line.
    static func main() async {
        do {
            if let fast = FastSync(CommandLine.arguments) {
                try await fast.run()
                return
            }
            if let fast = DiffRun(fastArguments: CommandLine.arguments) {
                try await fast.run()
                return
            }
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as FolioError {
            fail(error.message, exitCode: error.exitCode, kind: error.code.name)
        } catch let error as CLIError {
            fail(error.description, exitCode: error.exitCode, kind: error.kind)
        } catch let code as ExitCode {
            // Thrown after the command printed its own output (`sync` offline, `diff` different):
            // nothing more to say, so not through the parser's message builder.
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error).rawValue
            if code != 0, DiffRun.asksForJSON(CommandLine.arguments) {
                // A usage error of `diff --format json` is diff's own error document.
                print(ContentDiff.errorJSON(message(for: error), code: code).encoded(), terminator: "")
            } else {
                JSONFailure.printIfRequested(exitCode: code, message: message(for: error))
            }
            exit(withError: error)
        }
    }

    /// One `folio: error:` line (and the JSON document, with `--json`), then the exit code.
    static func fail(_ message: String, exitCode: Int32, kind: String?) -> Never {
        JSONFailure.printIfRequested(exitCode: exitCode, message: message, kind: kind)
        FileHandle.standardError.write(Data("folio: error: \(message)\n".utf8))
        Foundation.exit(exitCode)
    }
}
