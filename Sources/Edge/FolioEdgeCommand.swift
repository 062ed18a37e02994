import ArgumentParser
import FolioEdge
import Foundation

/// The entry point: a `--config` file's options go in front of the command line's, then
/// swift-argument-parser takes over.
@main
enum FolioEdgeMain {
    static func main() async {
        let arguments: [String]
        do { arguments = try ConfigFile.merged(Array(CommandLine.arguments.dropFirst())) } catch {
            FileHandle.standardError.write(Data("\(error)".split(separator: "\n").map { "folio-edge: error: \($0)\n" }.joined().utf8))
            exit(1)
        }
        await FolioEdgeCommand.main(arguments)
    }
}

struct FolioEdgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "folio-edge",
        abstract: "Serve a published Folio directory over HTTP/1.1, or HTTPS with HTTP/2, or cache an origin in front of clients (--origin).",
        discussion: "Options can come from a TOML file (--config FILE), each long option a key of the same name. SIGHUP reads it again.",
        subcommands: [Run.self, Validate.self],
        defaultSubcommand: Run.self)
}

/// `folio-edge [run]`: serve until SIGTERM.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Serve until SIGTERM: a published directory (--root), or a cache of --origin.")

    @OptionGroup var options: EdgeOptions

    func validate() throws {
        if let first = options.problems().first { throw ValidationError(ConfigFile.located(first, arguments: CommandLine.arguments)) }
    }

    func run() async throws {
        var config: EdgeConfiguration
        do { config = try options.configuration() } catch {
            Self.fail(ConfigFile.located("\(error)", arguments: CommandLine.arguments))
        }
        let commandLine = Array(CommandLine.arguments.dropFirst())
        let started = (try? ConfigFile.merged(commandLine)) ?? commandLine
        config.reload = { try Self.reread(commandLine, started: started) }
        do { try await Edge.run(config) } catch let error as EdgeStartupError { Self.fail("\(error)") }
    }

    /// The configuration as the config file and `commandLine` give it now (SIGHUP); an error with
    /// every problem otherwise, or when a change needs a restart.
    static func reread(_ commandLine: [String], started: [String]) throws -> EdgeConfiguration {
        let arguments = try ConfigFile.merged(commandLine)
        let options: EdgeOptions
        do { options = try EdgeOptions.parse(Array(arguments.drop { $0 == "run" })) } catch {
            throw ValidationError(EdgeOptions.message(for: error))
        }
        if let first = options.problems().first { throw ValidationError(ConfigFile.located(first, arguments: commandLine)) }
        let changed = ConfigFile.restartNeeded(started, arguments, tier: !options.origin.isEmpty)
        guard changed.isEmpty else {
            throw ValidationError("\(changed.joined(separator: ", ")) changed: a restart applies that (systemctl restart folio-edge)")
        }
        return try options.configuration()
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("folio-edge: error: \(message)\n".utf8))
        Foundation.exit(1)
    }
}

/// `folio-edge validate`: checks the options (and `--config` file) as a start would, without
/// listening.
struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check the configuration as a start would, without listening: certificates and keys, token files, --trust keys, the root's manifest or the origins, the ports.",
        discussion: "Prints 'configuration OK' and exits 0, or prints every error and exits 1.")

    @OptionGroup var options: EdgeOptions

    func run() async throws {
        var problems = options.problems()
        var notes: [String] = []
        if problems.isEmpty {
            do {
                let config = try options.configuration()
                let inherited = ProcessInfo.processInfo.environment["LISTEN_FDS"] != nil
                problems = EdgePreflight.problems(config, socketsInherited: inherited)
                notes = EdgePreflight.notes(config)
            } catch { problems.append("\(error)") }
        }
        for note in notes { FileHandle.standardError.write(Data("folio-edge: note: \(note)\n".utf8)) }
        guard problems.isEmpty else {
            for problem in problems { FileHandle.standardError.write(Data("folio-edge: error: \(ConfigFile.located(problem, arguments: CommandLine.arguments))\n".utf8)) }
            throw ExitCode(1)
        }
        print("configuration OK")
    }
}
