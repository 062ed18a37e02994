import FolioPlist
import FolioSupport
import FolioTestSupport
import Foundation

/// Seeded random edits of a copy of content/ that keep it valid: values, keys and array items
/// of app data (app/home.yaml, app/settings.json), articles, a catalog, sonnets' lines and files.
struct ContentEdits {
    let content: String
    var rng: SplitMix64
    var home = Self.initialHome
    var settings = Self.initialSettings
    var lastSonnet = 154
    var counter = 0
    /// What each edit did, for failure messages.
    var log: [String] = []

    init(content: String, seed: UInt64) {
        self.content = content
        rng = SplitMix64(seed: seed)
    }

    static let initialHome: PlistValue = .dict([
        "title": .string("Sonnets"), "subtitle": .string("Shakespeare's 154 sonnets, offline"),
        "updatedAt": .date(Date(timeIntervalSince1970: 1_795_597_200)),
        "hero": .dict(["image": .string("images/quill.png"), "caption": .string("A quill, an inkwell and a page")]),
        "sections": .array([
            .dict(["title": .string("Featured"), "style": .string("carousel"), "sonnets": .array([18, 116, 130].map { .int($0) })]),
            .dict(["title": .string("Reading"), "style": .string("list"), "articles": .array([.string("articles/welcome.plist")])]),
        ]),
    ])

    static let initialSettings: PlistValue = .dict([
        "locales": .array(["en", "cy", "de", "fr"].map { .string($0) }),
        "menu": .array((1...3).map { .dict(["id": .int(Int64($0)), "title": .string("Item \($0)")]) }),
        "theme": .string("light"),
    ])

    /// Writes the app data files (version 1 before any edit).
    func writeData() throws {
        try write("app/home.yaml", YAMLText.document(home))
        try write("app/settings.json", String(decoding: try JSONPlist.encode(settings), as: UTF8.self))
    }

    /// `count` random edits, then the app data files written.
    mutating func apply(_ count: Int) throws {
        let kinds: [(inout ContentEdits) throws -> String] = [
            { $0.homeValue() }, { $0.homeSections() }, { $0.homeSonnets() }, { $0.homeKey() },
            { $0.settingsLocales() }, { $0.settingsMenu() }, { $0.settingsKey() },
            { try $0.articleFront() }, { try $0.articleBody() }, { try $0.newArticle() },
            { try $0.catalogValue() }, { try $0.sonnetLines() }, { try $0.removeSonnet() },
        ]
        for _ in 0..<count {
            counter += 1
            log.append(try kinds[rng.int(0...(kinds.count - 1))](&self))
        }
        try writeData()
    }

    func write(_ path: String, _ text: String) throws {
        try FileIO.makeDirectory(FileIO.parent(of: content + "/" + path))
        try FileIO.writeAtomically(Array(text.utf8), to: content + "/" + path)
    }

    func read(_ path: String) throws -> String {
        String(decoding: try FileIO.read(content + "/" + path), as: UTF8.self)
    }

    /// An insert, removal (keeping `minCount` items) or move in `a`; its name.
    mutating func arrayEdit(_ a: inout [PlistValue], minCount: Int, fresh: PlistValue) -> String {
        switch rng.int(0...2) {
        case 0:
            a.insert(fresh, at: rng.int(0...a.count))
            return "insert"
        case 1 where a.count > minCount:
            a.remove(at: rng.int(0...(a.count - 1)))
            return "remove"
        default:
            guard a.count >= 2 else { return "none" }
            let item = a.remove(at: rng.int(0...(a.count - 1)))
            a.insert(item, at: rng.int(0...a.count))
            return "move"
        }
    }
}

extension PlistValue {
    /// This dictionary with `key` set to `value` (removed when nil).
    func setting(_ key: String, _ value: PlistValue?) -> PlistValue {
        guard case .dict(var d) = self else { return self }
        d[key] = value
        return .dict(d)
    }
}
