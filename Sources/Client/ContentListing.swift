import ArgumentParser
import FolioKitCore
import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// `folio ls [PREFIX]`
struct LsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List published logical paths with their kind, size and content type.",
        discussion: "PREFIX matches whole path segments: `folio ls articles` and `folio ls articles/` both list articles/….")

    @OptionGroup var options: ClientOptions
    @Argument(help: "Only paths under this folder (or this exact path).") var prefix: String = ""
    @Flag(help: "Print a JSON array of entries.") var json = false
    @Flag(help: "Say where the data came from.") var verbose = false
    @Flag(help: "Read only what is on disk (cache or seed).") var offline = false

    func run() async throws {
        let view = try await resolveView(options, refresh: !offline)
        if verbose { FileHandle.standardError.write(Data("folio: \(view.describe)\n".utf8)) }
        let entries = view.manifest.entries.filter { ContentEntry.path($0.path, isUnder: prefix) }.map(ContentEntry.init)
        if json {
            let bytes = try mapError("ls") { () throws(PlistError) in try JSONPlist.encode(.array(entries.map(\.json))) }
            FileHandle.standardOutput.write(Data(bytes))
        } else if entries.isEmpty {
            let note = "folio: no entries under '\(prefix)' in version \(view.manifest.version); `folio ls` lists them all\n"
            FileHandle.standardError.write(Data(note.utf8))
        } else {
            print(Self.table(entries), terminator: "")
        }
    }

    /// Rows of kind, size (bytes, right-aligned), content type and path, columns padded to fit.
    static func table(_ entries: [ContentEntry]) -> String {
        let kinds = entries.map { $0.kind ?? "-" }
        let sizes = entries.map { String($0.size) }
        let kindWidth = kinds.map(\.count).max() ?? 0
        let sizeWidth = sizes.map(\.count).max() ?? 0
        let typeWidth = entries.map(\.contentType.count).max() ?? 0
        var out = ""
        for (i, e) in entries.enumerated() {
            out += pad(kinds[i], kindWidth) + "  " + pad(sizes[i], sizeWidth, right: true) + "  "
            out += pad(e.contentType, typeWidth) + "  " + e.path + "\n"
        }
        return out
    }
}

/// `folio get PATH [-o FILE]`
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Write an entry's bytes (an asset's file, a structured entry's binary plist).")

    @OptionGroup var options: ClientOptions
    @Argument(help: "A logical path such as images/hero.png.") var path: String
    @Option(name: [.short, .customLong("output")], help: "Write to this file (atomically) instead of standard output.") var output: String?
    @Flag(help: "Say where the data came from.") var verbose = false
    @Flag(help: "Read only what is on disk (cache or seed).") var offline = false

    func run() async throws {
        let view = try await resolveView(options, refresh: !offline)
        if verbose { FileHandle.standardError.write(Data("folio: \(view.describe)\n".utf8)) }
        _ = try view.entry(path)
        let bytes = try view.bytes(path)
        guard let output, output != "-" else {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do { try FileIO.writeAtomically(bytes, to: output) } catch {
            throw CLIError("cannot write \(path) to \(output): \(error); check that its folder exists and is writable")
        }
    }
}

extension ContentEntry {
    /// The entry as JSON-ready plist: path, kind, size, gzipSize, contentType, locale, sha256,
    /// cache (absent keys are unknown or unset).
    var json: PlistValue {
        var d: [String: PlistValue] = [
            "path": .string(path), "size": .int(Int64(size)), "contentType": .string(contentType), "sha256": .string(sha256),
        ]
        if let kind { d["kind"] = .string(kind) }
        if let gzipSize { d["gzipSize"] = .int(Int64(gzipSize)) }
        if let locale { d["locale"] = .string(locale) }
        if let c = cachePolicy {
            d["cache"] = .dict([
                "maxAge": .int(Int64(c.maxAge)), "staleWhileRevalidate": .int(Int64(c.staleWhileRevalidate)),
                "staleIfError": .int(Int64(c.staleIfError)), "immutable": .bool(c.immutable),
                "cacheControl": .string(c.cacheControl),
            ])
        }
        return .dict(d)
    }

    /// The entry's metadata as aligned `name: value` lines, for `folio show` of an asset.
    var metadataText: String {
        var lines: [(String, String)] = [
            ("path", path), ("kind", kind ?? "unknown (published before content kinds)"), ("content type", contentType),
            ("size", "\(size) bytes"), ("gzip size", gzipSize.map { "\($0) bytes" } ?? "none (served as is)"),
        ]
        if let locale { lines.append(("locale", locale)) }
        lines.append(("sha256", sha256))
        lines.append(("cache", cachePolicy?.cacheControl ?? "not set for this path"))
        return lines.map { pad($0.0 + ":", 14) + $0.1 }.joined(separator: "\n") + "\n"
    }
}
