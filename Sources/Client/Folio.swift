import ArgumentParser
import FolioKit
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
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as FolioError {
            FileHandle.standardError.write(Data("folio: error: \(error.message)\n".utf8))
            Foundation.exit(error.exitCode)
        } catch let error as CLIError {
            FileHandle.standardError.write(Data("folio: error: \(error.description)\n".utf8))
            Foundation.exit(error.exitCode)
        } catch {
            exit(withError: error)
        }
    }
}
