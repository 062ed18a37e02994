// The Codable benchmark: FolioPlist's PlistDecoder/PlistEncoder against Foundation's
// PropertyListDecoder/PropertyListEncoder (binary format), on [Sonnet] from sonnets/all.plist.
import FolioPlist
import Foundation

/// One entry of sonnets/all.plist.
struct Sonnet: Codable, Equatable {
    var number: Int
    var roman: String
    var lines: [String]
}

/// Decodes and encodes `[Sonnet]` from the binary plist at `allPlistPath` with both coders,
/// `iterations` times each after a warm-up, and prints median and best times and the ratios.
func runCodableBench(allPlistPath: String, iterations: Int = 300) {
    guard let data = FileManager.default.contents(atPath: allPlistPath) else {
        fatalError("cannot read \(allPlistPath)")
    }
    func time(_ body: () throws -> Void) -> (median: Double, best: Double) {
        do { return try measure(iterations, body) } catch { fatalError("codable bench: \(error)") }
    }
    func ms(_ t: Double) -> String { String(format: "%8.3f ms", t) }

    let ours = PlistDecoder()
    let theirs = PropertyListDecoder()
    var encoder = PlistEncoder()
    encoder.outputFormat = .binary
    let foundationEncoder = PropertyListEncoder()
    foundationEncoder.outputFormat = .binary

    let sonnets: [Sonnet]
    do {
        sonnets = try ours.decode([Sonnet].self, from: data)
        let reference = try theirs.decode([Sonnet].self, from: data)
        precondition(sonnets == reference, "PlistDecoder and PropertyListDecoder disagree on \(allPlistPath)")
        let encoded: [UInt8] = try encoder.encode(sonnets)
        let general = BinaryPlist.encode(try encoder.encodeValue(sonnets))
        precondition(encoded == general, "fast and general binary encodings differ")
        let readBack = try theirs.decode([Sonnet].self, from: Data(encoded))
        precondition(readBack == sonnets, "Foundation does not read back PlistEncoder's output")
    } catch {
        fatalError("codable bench: \(error)")
    }

    var sink = 0
    let oursDecode = time { sink &+= try ours.decode([Sonnet].self, from: data).count }
    let theirsDecode = time { sink &+= try theirs.decode([Sonnet].self, from: data).count }
    let oursEncode = time { sink &+= try (encoder.encode(sonnets) as Data).count }
    let theirsEncode = time { sink &+= try foundationEncoder.encode(sonnets).count }

    print("codable: [Sonnet] (\(sonnets.count)) from \(allPlistPath), \(data.count) bytes, \(iterations) runs")
    print("                              decode (median / best)      encode (median / best)")
    print("  FolioPlist PlistCoder     \(ms(oursDecode.median)) / \(ms(oursDecode.best))   \(ms(oursEncode.median)) / \(ms(oursEncode.best))")
    print("  Foundation PropertyList   \(ms(theirsDecode.median)) / \(ms(theirsDecode.best))   \(ms(theirsEncode.median)) / \(ms(theirsEncode.best))")
    print(String(format: "  ratio (Foundation / folio): decode %.1fx median, %.1fx best; encode %.1fx median, %.1fx best",
        theirsDecode.median / oursDecode.median, theirsDecode.best / oursDecode.best,
        theirsEncode.median / oursEncode.median, theirsEncode.best / oursEncode.best))
    if sink == 42 { print("") }
}
