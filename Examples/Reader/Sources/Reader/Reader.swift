import FolioKit
import Foundation

/// Syncs from an edge, lists and reads sonnets, and says how many there are in the reader's
/// language: `reader EDGE-URL CACHE-DIR [SEED-FILE] [LOCALE]`.
@main
struct Reader {
    struct Sonnet: Decodable {
        var number: Int
        var roman: String
        var lines: [String]
    }

    struct Entry: Decodable {
        var number: Int
        var firstLine: String
    }

    static func main() async {
        let args = CommandLine.arguments.dropFirst()
        guard args.count >= 2 else {
            print("usage: reader EDGE-URL CACHE-DIR [SEED-FILE] [LOCALE]")
            exit(2)
        }
        let list = Array(args)
        do {
            let seed = try list.count > 2 && !list[2].isEmpty ? FolioSeed(contentsOf: list[2]) : nil
            let store = try FolioStore(edge: list[0], cacheDirectory: list[1], seed: seed)
            var changes = store.changes().makeAsyncIterator()
            let outcome = try await store.sync()
            print("sync: \(outcome.result.rawValue), \(outcome.objectsFetched) objects")
            if outcome.result == .offline { print(outcome.message) }
            if outcome.result == .updated, let change = await changes.next() {
                print("changed: \(change.changedPaths.count) paths, now version \(change.version)")
            }
            if let now = store.current { print("reading version \(now.version) from the \(now.origin.rawValue)") }

            let index = try store.decode([Entry].self, at: "sonnets/index.plist")
            for entry in index.prefix(3) { print("\(entry.number). \(entry.firstLine)") }
            let sonnet = try store.decode(Sonnet.self, at: "sonnets/018.plist")
            print(sonnet.roman)
            for line in sonnet.lines { print("  " + line) }

            let strings = try store.strings(locale: list.count > 3 ? list[3] : nil)
            print("[\(strings.locale)] " + (strings.string("list.count", .int(Int64(index.count))) ?? "\(index.count) sonnets"))
        } catch let error as FolioError {
            print("reader: \(error.message)" + (error.hasContent ? " (content still readable)" : ""))
            exit(1)
        } catch {
            print("reader: \(error)")
            exit(1)
        }
    }
}
