// folio-bench: the codec and Builder benchmarks behind `make bench`.
// Compares FolioCore's bplist00 codec with Foundation's PropertyListSerialization in this process.
import FolioLocalization
import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

struct Options {
    var root = "public"
    var builder = ".build/release/folio-build"
    var content = "content"
    var iterations = 300
    /// Profile one of folio's own operations in a loop ("decode" or "encode") and exit;
    /// "catalogs" runs only the catalog lookup section.
    var only: String?
    /// With --only decode/encode: the object file to profile instead of sonnets/all.plist.
    var object: String?

    init(_ args: [String]) {
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "--root": root = it.next() ?? root
            case "--builder": builder = it.next() ?? builder
            case "--content": content = it.next() ?? content
            case "--iterations": iterations = Int(it.next() ?? "") ?? iterations
            case "--only": only = it.next()
            case "--object": object = it.next()
            default: fatalError("unknown option \(a)")
            }
        }
    }
}

/// Runs `body` `iterations` times after a warm-up; returns the median and best time in milliseconds.
func measure(_ iterations: Int, _ body: () throws -> Void) rethrows -> (median: Double, best: Double) {
    for _ in 0..<max(3, iterations / 10) { try body() }
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    let clock = ContinuousClock()
    for _ in 0..<iterations {
        let d = try clock.measure(body)
        samples.append(Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1e3)
    }
    samples.sort()
    return (samples[samples.count / 2], samples[0])
}

func fmt(_ ms: Double) -> String { String(format: "%8.3f ms", ms) }

let options = Options(Array(CommandLine.arguments.dropFirst()))
if options.only == "catalogs" {
    try catalogBenchmark()
    exit(0)
}
if options.only == "signing" {
    try signingBenchmark(root: options.root, iterations: options.iterations)
    exit(0)
}
let manifest = try Manifest(bytes: try FileIO.read(options.root + "/manifest.plist"))
guard let entry = manifest.entry("sonnets/all.plist") else { fatalError("no sonnets/all.plist in \(options.root)") }
let bytes = try FileIO.read(options.object ?? (options.root + "/" + entry.objectPath))
let data = Data(bytes)
print("codec: sonnets/all.plist, \(bytes.count) bytes, median of \(options.iterations) runs")

var sink = 0
if options.only == nil { runCodableBench(allPlistPath: options.object ?? (options.root + "/" + entry.objectPath)) }
if let only = options.only {
    let v = try BinaryPlist.decode(bytes)
    let time = measure(options.iterations) {
        if only == "decode" { _ = try? BinaryPlist.decode(bytes) } else { sink &+= BinaryPlist.encode(v).count }
    }
    print("\(only): median \(fmt(time.median)), best \(fmt(time.best))")
    exit(0)
}
let oursDecode = try measure(options.iterations) {
    let v = try BinaryPlist.decode(bytes)
    if case .array(let a) = v { sink &+= a.count }
}
let value = try BinaryPlist.decode(bytes)
let oursEncode = measure(options.iterations) { sink &+= BinaryPlist.encode(value).count }
let foundationDecode = try measure(options.iterations) {
    let v = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
    sink &+= (v as? [Any])?.count ?? 0
}
let foundationValue = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
let foundationEncode = try measure(options.iterations) {
    sink &+= try PropertyListSerialization.data(fromPropertyList: foundationValue, format: .binary, options: 0).count
}
let roundTrip = try BinaryPlist.decode(BinaryPlist.encode(value))
precondition(roundTrip == value, "re-encoding all.plist must round-trip")

print("                      decode (median / best)       encode (median / best)")
print("  folio             \(fmt(oursDecode.median)) / \(fmt(oursDecode.best))   \(fmt(oursEncode.median)) / \(fmt(oursEncode.best))")
print("  Foundation        \(fmt(foundationDecode.median)) / \(fmt(foundationDecode.best))   \(fmt(foundationEncode.median)) / \(fmt(foundationEncode.best))")
print(String(format: "  ratio (Foundation / folio): decode %.1fx, encode %.1fx",
    foundationDecode.median / oursDecode.median, foundationEncode.median / oursEncode.median))
print(String(format: "  targets: decode < 0.5 ms (%@), encode < 1 ms (%@)",
    oursDecode.median < 0.5 ? "met" : "MISSED", oursEncode.median < 1.0 ? "met" : "MISSED"))

// The Builder end to end: a fresh publish into an empty directory, and a no-op rebuild.
// Spawned and reaped directly (`Subprocess`): Foundation's Process.waitUntilExit polls in 50 ms
// steps on Linux, which quantised these figures to 50 ms. Output (the content's coverage
// warnings, 14 times over) is discarded.
func runBuilder(_ output: String) -> Double {
    let start = ContinuousClock.now
    let result = Subprocess.run(
        [options.builder, "--content", options.content, "--output", output, "--quiet", "--source-revision", "bench"],
        captureOutput: false)
    let d = ContinuousClock.now - start
    precondition(result?.status == 0, "folio-build failed (\(result.map { "exit \($0.status)" } ?? "did not start"))")
    return Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1e3
}
let scratch = NSTemporaryDirectory() + "folio-bench-\(getpid())"
var fresh: [Double] = []
var noop: [Double] = []
for i in 0..<7 {
    let out = "\(scratch)/\(i)"
    fresh.append(runBuilder(out))
    noop.append(runBuilder(out))
}
try? FileManager.default.removeItem(atPath: scratch)
fresh.sort()
noop.sort()
print("builder: folio-build of \(options.content)/ (process wall time, median of 7)")
print("  fresh publish     \(fmt(fresh[3]))   (target < 300 ms: \(fresh[3] < 300 ? "met" : "MISSED"))")
print("  no-op rebuild     \(fmt(noop[3]))")
try signingBenchmark(root: options.root, iterations: options.iterations)
try catalogBenchmark()
if sink == 42 { print("") }

// Catalog lookups: the client's CatalogLookup over the published Localizable catalogs, as
// the client reads them (ru → en, es-419 → es → en), and decoding each compiled catalog.
func catalogBenchmark() throws {
    let locales = ["ru", "es-419", "es", "en"]
    var bytes: [String: [UInt8]] = [:]
    if let manifest = try? Manifest(bytes: FileIO.read(options.root + "/manifest.plist")) {
        for locale in locales {
            guard let e = manifest.entry(CompiledCatalog.path(table: "Localizable", locale: locale)),
                let b = try? FileIO.read(options.root + "/" + e.objectPath)
            else { continue }
            bytes[locale] = b
        }
    }
    guard bytes["en"] != nil else {
        print("catalogs: not published")
        return
    }
    var catalogs: [String: CompiledCatalog] = [:]
    for (locale, b) in bytes { catalogs[locale] = try CompiledCatalog(bytes: b) }

    print("catalogs: Localizable from \(options.root), decode = CompiledCatalog(bytes:), median of \(options.iterations) runs")
    for locale in locales {
        guard let b = bytes[locale] else {
            print("  decode \(locale.padding(toLength: 8, withPad: " ", startingAt: 0))   not published")
            continue
        }
        var keys = 0
        let t = try measure(options.iterations) { keys &+= try CompiledCatalog(bytes: b).strings.count }
        print("  decode \(locale.padding(toLength: 8, withPad: " ", startingAt: 0)) \(fmt(t.median)) / \(fmt(t.best))"
            + "   (\(b.count) bytes, \(catalogs[locale]!.strings.count) keys)")
    }

    // Every key of the chain in turn, the count argument cycling through 0..<200 (every plural form).
    let perRun = 200_000
    let runs = 5
    var sink = 0
    print("lookups: string(for:arguments: [.int(i % 200)]) over every key, \(perRun) per run, median of \(runs) runs")
    for chainLocales in [["ru", "en"], ["es-419", "es", "en"]] {
        let label = chainLocales.joined(separator: " → ")
        let missing = chainLocales.filter { catalogs[$0] == nil }
        guard missing.isEmpty else {
            print("  \(label): skipped, not published: \(missing.joined(separator: ", "))")
            continue
        }
        let lookup = CatalogLookup(chain: chainLocales.map { catalogs[$0]! })
        let keys = lookup.keys
        var answered: [String: Int] = [:]
        for key in keys { if let l = lookup.value(for: key)?.locale { answered[l, default: 0] += 1 } }
        let passes = max(1, perRun / max(1, keys.count))
        let count = passes * keys.count
        let t = measure(runs) {
            var i = 0
            for _ in 0..<passes {
                for key in keys {
                    if let r = lookup.string(for: key, arguments: [.int(Int64(i % 200))]) { sink &+= r.text.utf8.count }
                    i += 1
                }
            }
        }
        let perSecond = Double(count) / (t.median / 1e3)
        let from = chainLocales.map { "\(answered[$0] ?? 0) \($0)" }.joined(separator: ", ")
        print(String(format: "  %@  %@ lookups/s  %7.3f µs/lookup (best %.3f)   %d keys: %@",
            label.padding(toLength: 18, withPad: " ", startingAt: 0),
            String(format: "%12.0f", perSecond), t.median * 1e3 / Double(count), t.best * 1e3 / Double(count),
            keys.count, from))
    }
    if sink == 42 { print("") }
}
