import ArgumentParser
import FolioKitCore
import FolioLocalization
import Foundation

/// The reader's locale: `--locale`, else `LC_ALL`, `LC_MESSAGES`, `LANG` (POSIX order); nil for C/POSIX or unset.
enum ReaderLocale {
    /// Rejects a `--locale` that is not a locale tag.
    static func validate(_ option: String?) throws {
        if let option, LocaleTag(option) == nil {
            throw ValidationError("--locale '\(option)' is not a locale: give a BCP 47 tag or POSIX name like fr, pt-BR or es_MX")
        }
    }

    static func requested(_ option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> LocaleTag? {
        if let option { return LocaleTag(option) }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[name], !value.isEmpty { return LocaleTag(value) }
        }
        return nil
    }
}

/// The client's own labels, from the content's `Localizable` catalog when the version has one,
/// else the built-in English.
struct Labels {
    let table: LocalizedTable?

    static let english: [String: String] = [
        "status.offline": "Offline — showing saved copy",
        "status.source.network": "Downloaded from %@",
        "status.source.cache": "Saved copy",
        "status.source.seed": "Copy bundled with the app",
        "status.version": "Version %d",
        "error.notFound": "There is no sonnet %d.",
    ]

    /// Labels for the reader's locale; never fails (a broken catalog falls back to English).
    init(_ view: ContentView, locale: String?) {
        table = try? LocalizedTable.load(view, table: "Localizable", requested: ReaderLocale.requested(locale))
    }

    func text(_ key: String, _ arguments: FormatArgument...) -> String {
        if let found = table?.lookup.string(for: key, arguments: arguments) { return found.text }
        return FormatSpecifier.format(Self.english[key] ?? key, arguments)
    }

    /// "Saved copy · Version 3 · Updated 5 minutes ago", in the reader's language.
    func origin(_ view: ContentView, edge: String) -> String {
        var parts: [String] = []
        switch view.origin {
        case .network: parts.append(text("status.source.network", .string(edge)))
        case .cache: parts.append(text("status.source.cache"))
        case .seed: parts.append(text("status.source.seed"))
        }
        parts.append(text("status.version", .int(Int64(view.manifest.version))))
        if let validatedAt = view.validatedAt, table?.lookup.value(for: "status.updated") != nil {
            let minutes = max(0, Int(Date().timeIntervalSince(validatedAt)) / 60)
            parts.append(text("status.updated", .int(Int64(minutes))))
        }
        return parts.joined(separator: " · ")
    }
}
