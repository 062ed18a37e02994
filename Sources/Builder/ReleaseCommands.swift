import ArgumentParser
import FolioBuilder
import FolioPublished
import FolioSupport
import Foundation

/// How a publish signs its manifest: shared by a build and every release command.
struct SigningOptions: ParsableArguments {
    @Option(
        parsing: .upToNextOption,
        help: "Sign the manifest with these secret keys (folio keys generate); as many as the key list's threshold.")
    var signingKey: [String] = []
    @Option(help: "The root-signed key list that authorizes the signing keys (folio keys authorize); published as keylist.plist.")
    var keyList: String?
    @Option(help: "How long a signed manifest is accepted from signing, like 12h or 7d; a build renews it after half of this.")
    var validFor = "7d"

    func validate() throws {
        if signingKey.isEmpty != (keyList == nil) {
            throw ValidationError("--signing-key and --key-list go together: sign with keys that the key list authorizes")
        }
        if DurationText.seconds(validFor) == nil { throw ValidationError(DurationText.problem("--valid-for", validFor)) }
    }

    /// The signing configured, nil for none; a key that cannot be used ends the command, and so
    /// does (with `strict`) a validity shorter than clients' clock skew allowance.
    func load(forbidden: [String], output: String, strict: Bool = false) throws -> ReleaseSigning? {
        guard let keyList else { return nil }
        if let problem = ValidityCheck.problem(option: "--valid-for", validFor, what: "a signed manifest") {
            printErr("folio-build: \(strict ? "error" : "warning"): \(problem)")
            if strict {
                printErr("folio-build: nothing was published (--strict); \(output)/ is unchanged")
                throw ExitCode(1)
            }
        }
        do {
            // Signing time is the clock's, whole seconds: SOURCE_DATE_EPOCH dates the content.
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let signing = try ReleaseSigning.load(
                keyFiles: signingKey, keyListFile: keyList, validFor: DurationText.seconds(validFor) ?? ReleaseSigning.defaultValidFor,
                now: now, forbidden: forbidden)
            if let warning = signing.warning { printErr("folio-build: warning: \(warning)") }
            return signing
        } catch {
            printErr("folio-build: error: \(error)")
            printErr("folio-build: nothing was published; \(output)/ is unchanged")
            throw ExitCode(1)
        }
    }
}

/// A build's channel and the release it publishes.
struct PublishReleaseOptions: ParsableArguments {
    @Option(help: "The channel to publish into, like beta; production is the output's root.")
    var channel = Channel.production
    @Option(help: "Publish the content as a staged release to this share of the channel's installs, like 10 or 2.5 (percent); the rest keep the current version.")
    var rollout: String?
    @Option(help: "Publish the content as a release for the apps that match, like app-version>=3.2, platform=ios,android, os-version<18, locale=fr, country=FR,BE; repeatable (all must hold).")
    var target: [String] = []
    @Flag(help: "Mark the version (or the release) critical: apps are told to apply it at once.")
    var critical = false

    func validate() throws {
        if !Channel.isValidName(channel) { throw ValidationError("--channel: \(Channel.problem(channel))") }
        _ = try audience()
    }

    /// The release's audience; nil without `--rollout` and `--target`.
    func audience() throws -> ReleaseOptions? { try Self.audience(rollout: rollout, target: target) }

    /// The audience `--rollout` and `--target` give; nil for neither.
    static func audience(rollout: String?, target: [String]) throws -> ReleaseOptions? {
        guard rollout != nil || !target.isEmpty else { return nil }
        var options = ReleaseOptions()
        if let rollout { options.rolloutBasisPoints = try basisPoints(rollout, "--rollout") }
        for text in target {
            do { options.conditions.append(try ReleaseCondition(parsing: text)) } catch { throw ValidationError("--target: \(error)") }
        }
        return options
    }

    static func basisPoints(_ text: String, _ option: String) throws -> Int {
        guard let bp = Release.basisPoints(percent: text) else {
            throw ValidationError("\(option) takes a percentage from 0 to 100 with at most two decimals, like 10 or 2.5; got '\(text)'")
        }
        return bp
    }
}

/// `folio-build release …`: release management over what is already published.
struct ReleaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "Promote, stage, halt, resume and roll back releases: each a new signed version of a channel.",
        subcommands: [Promote.self, Rollout.self, Halt.self, Resume.self, Rollback.self, List.self])
}

/// What every release command that publishes takes.
struct ReleasePublishOptions: ParsableArguments {
    @Option(help: "The published directory.") var output = "public"
    @Option(help: "Write deltas from each of this many earlier versions to the new one; 0 writes none, and no head.plist.")
    var deltaHistory = DeltaWriter.defaultHistory
    @Flag(name: .shortAndLong, help: "Print only the summary line.") var quiet = false
    @OptionGroup(title: "Signing") var signing: SigningOptions

    /// The manager that publishes the changed versions.
    func manager() throws -> ReleaseManager {
        var options = PublishOptions(createdAt: Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        options.deltaHistory = deltaHistory
        options.signing = try signing.load(forbidden: [output], output: output)
        return ReleaseManager(root: output, options: options)
    }

    /// Runs one change, printing its summary or its error.
    func run(_ what: String, _ body: (ReleaseManager) throws -> PublishResult) throws {
        let manager = try manager()
        let start = ContinuousClock.now
        do {
            let result = try body(manager)
            print("\(what): " + result.summary(elapsedMilliseconds: Pipeline.milliseconds(since: start)))
            if !quiet, let listing = try? ReleaseManager.describe(root: output) { print(listing) }
        } catch {
            printErr("folio-build: error: \(error)")
            printErr("folio-build: nothing was published; \(output)/ is unchanged")
            throw ExitCode(1)
        }
    }
}

func validChannel(_ name: String, _ option: String) throws {
    if !Channel.isValidName(name) { throw ValidationError("\(option): \(Channel.problem(name))") }
}

extension ReleaseCommand {
    struct Promote: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "promote",
            abstract: "Publish one channel's current entries as a new version of another (with --rollout or --target, as a release there).")
        @Option(help: "The channel to take the entries from.") var from: String
        @Option(help: "The channel to publish them into.") var to: String
        @Option(help: "Stage it: reach only this share of the target's installs, like 10 (percent).") var rollout: String?
        @Option(help: "Reach only the apps that match, like platform=ios (see folio-build build --help); repeatable.") var target: [String] = []
        @OptionGroup var publish: ReleasePublishOptions

        func validate() throws {
            try validChannel(from, "--from")
            try validChannel(to, "--to")
            _ = try PublishReleaseOptions.audience(rollout: rollout, target: target)
        }

        func run() throws {
            let audience = try PublishReleaseOptions.audience(rollout: rollout, target: target)
            try publish.run("promoted \(from) to \(to)") { try $0.promote(from: from, to: to, audience: audience) }
        }
    }

    struct Rollout: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rollout",
            abstract: "Change a staged release's share; at 100% a release for everyone becomes the channel's current entries.")
        @Option(help: "The channel.") var channel = Channel.production
        @Option(help: "The share of installs, like 25 (percent).") var percent: String
        @Option(help: "The release (its id, the version that published it); needed when the channel has several.") var release: Int?
        @OptionGroup var publish: ReleasePublishOptions

        func validate() throws {
            try validChannel(channel, "--channel")
            _ = try PublishReleaseOptions.basisPoints(percent, "--percent")
        }

        func run() throws {
            let bp = try PublishReleaseOptions.basisPoints(percent, "--percent")
            try publish.run("rollout of \(channel) at \(Release.percentText(bp))") { try $0.rollout(channel: channel, release: release, basisPoints: bp) }
        }
    }

    /// The releases `halt` and `resume` act on.
    struct HaltTarget: ParsableArguments {
        @Option(help: "The channel.") var channel = Channel.production
        @Option(help: "Only this release.") var release: Int?
        @OptionGroup var publish: ReleasePublishOptions

        func validate() throws { try validChannel(channel, "--channel") }

        /// Publishes the channel's next version with the releases halted or resumed.
        func set(halted: Bool) throws {
            try publish.run("\(halted ? "halted" : "resumed") \(release.map { "release \($0) of " } ?? "")\(channel)") {
                try $0.setHalted(halted, channel: channel, release: release)
            }
        }
    }

    struct Halt: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "halt",
            abstract: "Halt a channel's releases (or one): every install goes back to the channel's current entries.")
        @OptionGroup var target: HaltTarget

        func run() throws { try target.set(halted: true) }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume halted releases (or one) at the share they had.")
        @OptionGroup var target: HaltTarget

        func run() throws { try target.set(halted: false) }
    }

    struct Rollback: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rollback",
            abstract: "Publish an earlier version's entries again as the channel's newest version (a roll-forward: no client accepts a lower version).")
        @Option(help: "The channel.") var channel = Channel.production
        @Option(help: "The earlier version whose entries to publish.") var to: Int
        @OptionGroup var publish: ReleasePublishOptions

        func validate() throws {
            try validChannel(channel, "--channel")
            if to < 1 { throw ValidationError("--to takes a version number, 1 or more") }
        }

        func run() throws {
            try publish.run("rolled \(channel) back to version \(to)'s entries") { try $0.rollback(channel: channel, to: to) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Show every channel's version and releases.")
        @Option(help: "The published directory.") var output = "public"

        func run() throws {
            do { print(try ReleaseManager.describe(root: output)) } catch {
                printErr("folio-build: error: \(error)")
                throw ExitCode(1)
            }
        }
    }
}
