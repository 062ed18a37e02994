import ArgumentParser
import FolioKitCore
import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// `folio sync`
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Bring the cache up to the edge's current version.")

    @OptionGroup var options: ClientOptions
    @Flag(help: "Ask the edge even if the cache hints say the manifest is still fresh.") var force = false
    @Flag(help: "Accept a manifest older than the cached one (a rollback).") var allowDowngrade = false
    @Flag(help: "Fail at once instead of waiting when another sync holds the cache.") var noWait = false
    @Flag(help: "Print a machine-readable summary.") var json = false
    @Flag(help: "Fetch the manifest and changed objects whole, not deltas from the cached version.") var noDelta = false
    @Flag(help: "Also say how the update was fetched, and why not by delta.") var verbose = false

    func run() async throws {
        try await Self.perform(
            try options.syncSettings(), cachePath: try options.checkedCachePath(creating: true), force: force,
            allowDowngrade: allowDowngrade, noWait: noWait, json: json, deltas: !noDelta, verbose: verbose)
    }

    /// The sync itself, shared with the fast path that skips argument parsing (`FastSync`).
    static func perform(
        _ base: SyncSettings, cachePath: String, force: Bool, allowDowngrade: Bool, noWait: Bool, json: Bool,
        deltas: Bool = true, verbose: Bool = false
    ) async throws {
        var settings = base
        settings.force = force
        settings.allowDowngrade = allowDowngrade
        settings.waitForLock = !noWait
        settings.deltas = deltas
        if !json, isatty(2) == 1 { settings.progress = { ProgressBar.draw($0) } }
        let report: SyncReport
        do {
            let cache = ContentCache(dir: cachePath, edge: settings.edge, channel: settings.channel)
            report = try await Syncer(cache: cache, settings: settings).run()
        } catch let failure as FolioError {
            throw CLIError(failure.message, exitCode: failure.exitCode, kind: failure.code.name)
        } catch let error as FileError {
            throw CLIError("\(error)")
        }
        if json {
            var document = report.json
            if report.result == .offline, case .dict(let fields) = document {
                document = JSONFailure.attach(to: fields, exitCode: 3, message: report.message, kind: "edgeUnreachable")
            }
            FileHandle.standardOutput.write(Data(try JSONPlist.encode(document)))
        } else {
            FileHandle.standardOutput.write(Data("folio: \(report.message)\n".utf8))
            if verbose {
                var how: [String] = []
                if let saved = report.bytesSaved { how.append("\(report.bytes) bytes in \(report.requests) requests, \(saved) saved by deltas") }
                if let why = report.deltaFallback { how.append("deltas not used: \(why)") }
                if !how.isEmpty { FileHandle.standardOutput.write(Data("folio: \(how.joined(separator: "; "))\n".utf8)) }
            }
        }
        if report.result == .offline { throw ExitCode(3) }
    }
}

/// `folio sync` with nothing but its own flags, read straight from argv: a no-op sync is mostly
/// process start-up, and swift-argument-parser's reflection over every command costs more than
/// the request itself. Anything else (help, an unknown or misspelt flag, `--flag=value`) returns
/// nil and goes through the full parser, which also gives the error messages.
struct FastSync {
    var edge: String?
    var cacheDir: String?
    var trust: [String] = []
    var timeout: String?
    var force = false, allowDowngrade = false, noWait = false, json = false, noDelta = false, verbose = false

    init?(_ arguments: [String]) {
        var args = arguments.dropFirst()
        var sawSync = false
        // `folio [--edge URL] [--cache-dir DIR] sync [flags, --edge, --cache-dir]`; a repeated
        // option is the parser's business (it says which one wins or complains).
        while let arg = args.popFirst() {
            switch arg {
            case "sync" where !sawSync: sawSync = true
            case "--force" where sawSync && !force: force = true
            case "--allow-downgrade" where sawSync && !allowDowngrade: allowDowngrade = true
            case "--no-wait" where sawSync && !noWait: noWait = true
            case "--json" where sawSync && !json: json = true
            case "--no-delta" where sawSync && !noDelta: noDelta = true
            case "--verbose" where sawSync && !verbose: verbose = true
            case "--edge" where edge == nil, "--cache-dir" where cacheDir == nil, "--timeout" where timeout == nil, "--trust":
                guard let value = args.popFirst(), !value.hasPrefix("-") else { return nil }
                switch arg {
                case "--edge": edge = value
                case "--cache-dir": cacheDir = value
                case "--timeout": timeout = value
                default: trust.append(value)
                }
            default: return nil
            }
        }
        guard sawSync else { return nil }
        if ClientOptions.refusedByValidation(edge: edge, timeout: timeout) { return nil }
    }

    func run() async throws {
        let settings = ClientOptions.syncSettings(
            edge: ClientOptions.edgeURL(edge), trust: try ClientOptions.trustedRoots(trust), appVersion: ClientOptions.appVersion(nil),
            profile: .fromEnvironment, timeout: TimeoutSetting.duration(timeout))
        let cachePath = ClientOptions.cachePath(cacheDir)
        try CacheDirCheck.check(cachePath, option: cacheDir, creating: true)
        try await SyncCommand.perform(
            settings, cachePath: cachePath, force: force,
            allowDowngrade: allowDowngrade, noWait: noWait, json: json, deltas: !noDelta, verbose: verbose)
    }
}

/// `folio list sonnets`
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the sonnets.")

    enum What: String, ExpressibleByArgument, CaseIterable { case sonnets }

    @OptionGroup var options: ClientOptions
    @Argument(help: "What to list: sonnets.") var what: What
    @Flag(help: "Say where the data came from.") var verbose = false
    @Flag(help: "Read only what is on disk (cache or seed).") var offline = false

    func run() async throws {
        let view = try await resolveView(options, refresh: !offline)
        if verbose { FileHandle.standardError.write(Data("folio: \(view.describe)\n".utf8)) }
        guard let items = try view.plist(Poem.indexPath).arrayValue else {
            throw CLIError("sonnets/index.plist is not an array")
        }
        for item in items {
            let n = item["number"]?.intValue ?? 0
            let roman = item["roman"]?.stringValue ?? ""
            let first = item["firstLine"]?.stringValue ?? ""
            print(pad(String(n), 4, right: true) + "  " + pad(roman, 8) + first)
        }
    }
}

/// `folio read sonnet 18`
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Print a sonnet, laid out as a poem.")

    enum What: String, ExpressibleByArgument, CaseIterable { case sonnet }

    @OptionGroup var options: ClientOptions
    @Argument(help: "What to read: sonnet.") var what: What
    @Argument(help: "The sonnet's number or Roman numeral (18 or XVIII).") var number: String
    @Flag(help: "Say where the data came from (network, cache or seed), its version and age.") var verbose = false
    @Flag(help: "Read only what is on disk (cache or seed).") var offline = false
    @Option(help: "The language of the labels (default: LC_ALL, LC_MESSAGES, then LANG).") var locale: String?

    func validate() throws {
        try ReaderLocale.validate(locale)
        guard Self.parseNumber(number) != nil else {
            throw ValidationError("'\(number)' is not a sonnet number: give a number like 18 or a Roman numeral like XVIII")
        }
    }

    static func parseNumber(_ s: String) -> Int? {
        if let n = Int(s), n >= 1, n <= 9999 { return n }
        return RomanNumeral.parse(s)
    }

    func run() async throws {
        let n = Self.parseNumber(number)!
        let view = try await resolveView(options, refresh: !offline)
        let labels = Labels(view, locale: locale)
        if view.refreshFailed, view.origin == .cache {
            FileHandle.standardError.write(Data("folio: \(labels.text("status.offline"))\n".utf8))
        }
        if verbose {
            FileHandle.standardError.write(Data("folio: \(labels.origin(view, edge: options.edgeURL))\nfolio: \(view.describe)\n".utf8))
        }
        let path = Poem.path(n)
        guard view.manifest.entry(path) != nil else {
            throw CLIError("\(labels.text("error.notFound", .int(Int64(n)))) (version \(view.manifest.version); `folio list sonnets` shows them all)")
        }
        let sonnet = try view.plist(path)
        guard let lines = sonnet["lines"]?.arrayValue?.compactMap(\.stringValue) else {
            throw CLIError("\(path) has no lines")
        }
        print(Poem.layout(roman: sonnet["roman"]?.stringValue ?? RomanNumeral.format(n), lines: lines), terminator: "")
    }
}

/// Lays a sonnet out: its numeral, a blank line, the quatrains, and the couplet indented.
enum Poem {
    /// The sonnets' light index, as the sonnet kind publishes it.
    static let indexPath = "sonnets/index.plist"
    /// `sonnets/018.plist` for 18.
    static func path(_ number: Int) -> String {
        let digits = String(number)
        return "sonnets/" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits + ".plist"
    }

    static func layout(roman: String, lines: [String]) -> String {
        var out = "\(roman)\n\n"
        for (i, line) in lines.enumerated() {
            out += (lines.count >= 12 && i >= lines.count - 2 ? "    " : "") + line + "\n"
        }
        return out
    }
}

/// `folio show PATH`
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print an entry (a logical path) or a plist file as readable text.")

    @OptionGroup var options: ClientOptions
    @Argument(help: "A logical path such as sonnets/018.plist or images/hero.png (an asset: its metadata), or a plist file.")
    var path: String
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Say where the data came from.") var verbose = false
    @Flag(help: "Read only what is on disk (cache or seed).") var offline = false

    func run() async throws {
        let value: PlistValue
        if FileIO.exists(path) {
            value = try readPlist(path)
        } else {
            let view = try await resolveView(options, refresh: !offline)
            if verbose { FileHandle.standardError.write(Data("folio: \(view.describe)\n".utf8)) }
            let entry = try view.entry(path)
            guard entry.isPlist else { return try showMetadata(ContentEntry(entry)) }
            value = try view.plist(path)
        }
        if json {
            // "$null" (what the builder publishes for a source's null) is printed as null.
            FileHandle.standardOutput.write(Data(try mapError(path) { () throws(PlistError) in try JSONPlist.encode(value, nulls: true) }))
        } else {
            FileHandle.standardOutput.write(Data(value.readableText(nulls: true).utf8))
        }
    }

    /// An asset's metadata (its bytes are `folio get`'s): aligned lines, or the `folio ls --json` object.
    private func showMetadata(_ entry: ContentEntry) throws {
        if json {
            FileHandle.standardOutput.write(Data(try mapError(path) { () throws(PlistError) in try JSONPlist.encode(entry.json) }))
        } else {
            FileHandle.standardOutput.write(Data(entry.metadataText.utf8))
        }
    }
}

/// `folio status`
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show what the cache holds and how fresh it is.")

    @OptionGroup var options: ClientOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        _ = try options.checkedCachePath()
        let cache = options.cache
        let held = cache.current()
        var d: [String: PlistValue] = [
            "result": .string("ok"), "edge": .string(options.edgeURL), "cacheDir": .string(cache.dir),
            "cacheBytes": .int(Int64(cache.sizeOnDisk())),
        ]
        let seed = BundledSeed.seed?.manifest
        if let seed {
            d["seedVersion"] = .int(Int64(seed.version))
            d["seedCreatedAt"] = .date(seed.createdAt)
        }
        var lines = ["edge:        \(options.edgeURL)", "cache:       \(cache.dir) (\(cache.sizeOnDisk()) bytes)"]
        if let held {
            let maxAge = held.state.lifetime(of: held.manifest)
            let age = Int(Date().timeIntervalSince(held.state.validatedAt))
            let fresh = age < maxAge
            d["version"] = .int(Int64(held.state.version))
            d["publishedAt"] = .date(held.manifest.createdAt)
            d["validatedAt"] = .date(held.state.validatedAt)
            d["lastSyncAt"] = .date(held.state.lastAttemptAt)
            d["lastResult"] = .string(held.state.lastResult)
            if let e = held.state.lastError { d["lastError"] = .string(e) }
            if let until = held.state.retryAfter, held.state.lastResult == "maintenance" { d["retryAfter"] = .date(until) }
            d["fresh"] = .bool(fresh)
            d["maxAge"] = .int(Int64(maxAge))
            lines.append("version:     \(held.state.version) (published \(Age.text(since: held.manifest.createdAt)) ago)")
            if let from = held.state.edge {
                d["syncedFrom"] = .string(from)
                if from != cache.edge { lines.append("synced from: \(from) (nothing synced from this edge yet; reading that)") }
            }
            lines.append("last sync:   \(Age.text(since: held.state.lastAttemptAt)) ago: \(held.state.lastResult)" + (held.state.lastError.map { " (\($0))" } ?? ""))
            if let needed = held.manifest.minimumAppVersion {
                d["minimumAppVersion"] = .string(needed)
                lines.append("needs app:   \(needed) or later")
            }
            if let until = held.manifest.maintenanceUntil, until > Date() {
                d["maintenanceUntil"] = .date(until)
                lines.append("maintenance: the publisher marks this version as a maintenance window until \(PlistDates.formatISO8601(until))")
            } else if held.state.lastResult == "maintenance", let until = held.state.retryAfter {
                lines.append("maintenance: the edge asked clients to come back after \(PlistDates.formatISO8601(until)); reading the cached version")
            }
            if let method = held.state.lastMethod {
                d["lastUpdate"] = .string(method)
                lines.append("last update: \(method)")
            }
            lines.append("freshness:   " + (fresh ? "fresh (validated \(age) s ago, max-age \(maxAge) s)" : "stale (validated \(Age.text(since: held.state.validatedAt)) ago, max-age \(maxAge) s)"))
            let signing = SigningStatus(cache.currentManifestBytes() ?? [], parsed: held.published, trust: try options.trustedRoots())
            d["signing"] = signing.json
            lines.append("signing:     \(signing.line)")
        } else {
            lines.append("version:     none cached yet (run `folio sync`)")
        }
        ReleaseStatus.describe(held, cache: cache, profile: options.release.profile, json: &d, lines: &lines)
        if let seed {
            lines.append("seed:        version \(seed.version) (published \(PlistDates.formatISO8601(seed.createdAt)))")
        }
        // Other edges this cache was synced from (QA, staging): kept apart, read when pointed at.
        let others = cache.environments().compactMap { s in s.edge.flatMap { $0 == cache.edge ? nil : ($0, s.version) } }
        if !others.isEmpty {
            d["otherEdges"] = .array(others.map { .dict(["edge": .string($0.0), "version": .int(Int64($0.1))]) })
            lines.append("also held:   " + others.map { "\($0.0) (version \($0.1))" }.joined(separator: ", "))
        }
        let preferSeed = SeedChoice.prefersSeed(seed, over: held?.manifest)
        let reading = preferSeed ? "seed" : (held == nil ? "nothing" : "cache")
        d["reading"] = .string(reading)
        lines.append("reading:     \(reading)")
        if let notice = (preferSeed ? seed : held?.manifest)?.notice {
            d["notice"] = .string(notice)
            lines.append("notice:      \(notice)")
        }
        if json {
            FileHandle.standardOutput.write(Data(try JSONPlist.encode(.dict(d))))
        } else {
            print(lines.joined(separator: "\n"))
        }
    }
}

/// What `status` says about the signature of the version held.
struct SigningStatus {
    var signed: SignedManifest?
    /// "verified", "unsigned", "untrusted" (trusted roots given and the check failed) or
    /// "unchecked" (no root trusted).
    var trust: String
    var problem: String?

    /// `parsed` is the manifest already read from `bytes`.
    init(_ bytes: [UInt8], parsed: Manifest, trust roots: Trust?) {
        signed = try? SignedManifest.decode(bytes, parsed: parsed)
        guard let roots else {
            trust = signed == nil ? "unsigned" : "unchecked"
            return
        }
        do {
            _ = try roots.verify(bytes, parsed: parsed)
            trust = "verified"
        } catch {
            trust = error.kind == .unsigned ? "unsigned" : "untrusted"
            problem = error.description
        }
    }

    var json: PlistValue {
        var d: [String: PlistValue] = ["trust": .string(trust), "signed": .bool(signed != nil)]
        if let signed {
            let list = signed.keyList.keyList
            d["signers"] = .array(signed.signatures.map { .string($0.keyID) })
            d["keyListVersion"] = .int(Int64(list.version))
            d["rootKeyID"] = .string(list.root.keyID)
            d["threshold"] = .int(Int64(list.threshold))
            d["keyListExpiresAt"] = .date(list.expiresAt)
            if let e = signed.manifest.expiresAt { d["expiresAt"] = .date(e) }
        }
        if let problem { d["problem"] = .string(problem) }
        return .dict(d)
    }

    var line: String {
        guard let signed else {
            return problem != nil ? "unsigned; a root is trusted, so a sync refuses unsigned versions" : "unsigned"
        }
        var s = "signed by \(signed.signatures.map(\.keyID).joined(separator: ", ")) under key list \(signed.keyList.keyList.version) of root \(signed.keyList.keyList.root.keyID)"
        if let e = signed.manifest.expiresAt { s += ", expires \(PlistDates.formatISO8601(e))" }
        switch trust {
        case "verified": s += "; verified"
        case "unchecked": s += "; not checked (no --trust)"
        default: s += "; NOT TRUSTED: \(problem ?? "")"
        }
        return s
    }
}

func resolveView(_ options: ClientOptions, refresh: Bool) async throws -> ContentView {
    _ = try options.checkedCachePath()
    guard var view = await ContentView.resolve(cache: options.cache, seed: BundledSeed.seed, settings: try options.syncSettings(), refresh: refresh)
    else {
        throw CLIError("no content: the cache at \(options.cachePath) is empty, the edge \(options.edgeURL) is unreachable, and this build has no seed")
    }
    if let refusal = view.refusal {
        FileHandle.standardError.write(Data("folio: warning: \(refusal.message); reading version \(view.manifest.version) from the \(view.origin.rawValue)\n".utf8))
    }
    if let notice = view.manifest.notice { FileHandle.standardError.write(Data("folio: notice: \(notice)\n".utf8)) }
    view.appVersion = options.appVersionValue
    return view
}

func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - s.count))
    return right ? fill + s : s + fill
}
