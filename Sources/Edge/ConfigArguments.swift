import ArgumentParser
import Foundation

/// The keys a config file takes, read off `EdgeOptions` itself (its properties and their types),
/// so that every long option is a key without a list to keep in step.
extension ConfigFile {
    static let keys: [String: Kind] = {
        let help = EdgeOptions.helpMessage(columns: 10_000)
        var table: [String: Kind] = [:]
        for child in Mirror(reflecting: EdgeOptions()).children {
            guard let label = child.label, label.hasPrefix("_") else { continue }
            let key = optionName(String(label.dropFirst()))
            guard key != "config", help.contains("--\(key)") else { continue }
            switch child.value {
            case is Option<String>, is Option<String?>: table[key] = .string
            case is Option<Int>, is Option<Int?>: table[key] = .integer
            case is Option<Double>, is Option<Double?>: table[key] = .number
            case is Option<[String]>: table[key] = .list
            case is Flag<Bool>: table[key] = .flag(invertible: help.contains("--no-\(key)"))
            default: fatalError("EdgeOptions.\(label): a config file cannot take \(type(of: child.value)); add its kind to ConfigFile.keys")
            }
        }
        return table
    }()

    /// swift-argument-parser's long name for a property: `maxHeaderBytes` is `max-header-bytes`.
    static func optionName(_ property: String) -> String {
        var name = ""
        var previous: Character?
        for c in property {
            if c.isUppercase, let p = previous, p.isLowercase || p.isNumber { name.append("-") }
            name.append(Character(c.lowercased()))
            previous = c
        }
        return name
    }

    /// The keys the command line `arguments` sets (`--key`, `--key=…`, `--no-key`). `key` and
    /// `no-key` go together: either on the command line overrides both in the file.
    static func keysGiven(_ arguments: [String]) -> Set<String> {
        var given = Set<String>()
        for argument in arguments where argument.hasPrefix("--") {
            var name = String(argument.dropFirst(2).prefix { $0 != "=" })
            if name.hasPrefix("no-") { name.removeFirst(3) }
            for key in [name, "no-" + name] where keys[key] != nil { given.insert(key) }
        }
        return given
    }

    /// The command line with the file's options in front of the subcommand's own (the command
    /// line wins); the command line alone without `--config`.
    static func merged(_ arguments: [String]) throws -> [String] {
        guard let path = configPath(arguments) else { return arguments }
        let file = try ConfigFile(path: path)
        let given = keysGiven(arguments)
        let fromFile = file.entries.filter { !given.contains($0.key) }.flatMap(\.arguments)
        let subcommands: Set<String> = ["run", "validate"]
        if let first = arguments.first, subcommands.contains(first) { return [first] + fromFile + arguments.dropFirst() }
        return fromFile + arguments
    }

    /// The value of `--config` on a command line.
    static func configPath(_ arguments: [String]) -> String? {
        for (i, argument) in arguments.enumerated() {
            if argument == "--config", i + 1 < arguments.count { return arguments[i + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return nil
    }

    /// `message` about an option, prefixed with the place of the key in the config file when the
    /// option it names first came from the file.
    static func located(_ message: String, arguments: [String]) -> String {
        guard let path = configPath(arguments), let file = try? ConfigFile(path: path) else { return message }
        let given = keysGiven(arguments)
        let fromFile = Set(file.entries.map(\.key)).subtracting(given)
        for word in message.split(whereSeparator: { " '(),:".contains($0) }) where word.hasPrefix("--") {
            let key = String(word.dropFirst(2).prefix { $0 != "=" })
            if fromFile.contains(key) { return file.problem(key, "\(key): \(message)").description }
        }
        return message
    }
}

/// What a reload (SIGHUP) may change; any other option needs a restart.
extension ConfigFile {
    static let reloadable: Set<String> = [
        "tls-cert", "tls-key", "request-timeout", "max-header-bytes", "manifest-max-age", "stale-while-revalidate", "stale-if-error",
        "purge-token-file", "maintenance-file", "log-level", "drain-timeout", "config",
    ]

    /// What a tier reloads besides: its origins and their policy (not a switch between a tier
    /// and a published directory).
    static let reloadableInTier: Set<String> = ["origin", "origin-policy", "health-interval-ms"]

    /// The options whose values differ between two command lines and that only a restart can
    /// change (`trust` too for a tier, which checks it as it fetches).
    static func restartNeeded(_ old: [String], _ new: [String], tier: Bool) -> [String] {
        let (a, b) = (values(old), values(new))
        let tierBoth = tier && a["origin"] != nil && b["origin"] != nil
        let fixed = Set(a.keys).union(b.keys).subtracting(reloadable).subtracting(tier ? [] : ["trust"])
            .subtracting(tierBoth ? reloadableInTier : [])
        return fixed.filter { a[$0] != b[$0] }.sorted().map { "--\($0)" }
    }

    /// Each option's values on a command line, by key (`true`/`false` for a flag).
    static func values(_ arguments: [String]) -> [String: [String]] {
        var values: [String: [String]] = [:]
        var i = 0
        while i < arguments.count {
            defer { i += 1 }
            let argument = arguments[i]
            guard argument.hasPrefix("--") else { continue }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            if let equals = body.firstIndex(of: "=") {
                values[name, default: []].append(String(body[body.index(after: equals)...]))
            } else if case .flag = keys[name] {
                values[name] = ["true"]
            } else if name.hasPrefix("no-"), case .flag = keys[String(name.dropFirst(3))] {
                values[String(name.dropFirst(3))] = ["false"]
            } else if keys[name] != nil || name == "config", i + 1 < arguments.count {
                values[name, default: []].append(arguments[i + 1])
                i += 1
            }
        }
        return values
    }
}
