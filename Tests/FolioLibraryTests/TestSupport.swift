import Foundation
import FolioTestSupport
import Testing

@testable import FolioPlist

/// What the random value generator may produce; each external format drops what it cannot carry.
struct GeneratorOptions {
    var sets = true
    var uids = true
    var dates = true
    var data = true
    /// NaN reals with arbitrary payloads.
    var nan = true
    var negativeZero = true
    var infinities = true
    /// Dates with a fractional second (else whole seconds only).
    var fractionalDates = true
    /// Dates within 1900...2100 (else anywhere in ±1e11 s).
    var modestDates = false
    /// UIDs below 2^uidBits.
    var uidBits = 64
    var maxDepth = 3

    static let binary = GeneratorOptions()
    /// What Python's plistlib reads back losslessly (no sets; dates at millisecond precision).
    static let python = GeneratorOptions(sets: false, nan: false, modestDates: true)
    /// What survives binary -> libplist 2.2 XML -> our XML reader.
    static let plistutil = GeneratorOptions(
        sets: false, nan: false, negativeZero: false, fractionalDates: false, modestDates: true, uidBits: 32)
    /// What our own XML writer and reader round-trip.
    static let xml = GeneratorOptions(
        sets: false, nan: false, negativeZero: false, fractionalDates: false, modestDates: true)
    /// What JSON can carry natively.
    static let json = GeneratorOptions(sets: false, uids: false, dates: false, data: false, nan: false, infinities: false)
}

/// Produces random nested property lists of every type.
struct ValueGenerator {
    var rng: SplitMix64
    var options: GeneratorOptions

    init(seed: UInt64, options: GeneratorOptions = .binary) {
        rng = SplitMix64(seed: seed)
        self.options = options
    }

    /// Scalars for random strings: ASCII (including XML/JSON specials), Latin-1, CJK, BMP symbols and non-BMP.
    /// No combining marks, so no two generated strings are canonically equivalent but different.
    static let scalarPool: [Unicode.Scalar] = {
        var pool: [Unicode.Scalar] = []
        for v in 0x20...0x7E { pool.append(Unicode.Scalar(UInt8(v))) }
        pool += ["\t", "\n", "é", "Ü", "ß", "ñ", "ø", "€", "日", "本", "語", "中", "한", "ア", "🙂", "𝄞", "👍", "😀", "\u{FFFD}", "\u{7F}"]
        return pool
    }()

    mutating func string() -> String {
        let length: Int
        switch rng.int(0...9) {
        case 0: length = 0
        case 1: length = rng.int(14...16)
        case 2: length = rng.int(30...300)
        default: length = rng.int(1...13)
        }
        let asciiOnly = rng.chance(0.5)
        var s = String.UnicodeScalarView()
        for _ in 0..<length {
            s.append(asciiOnly ? ValueGenerator.scalarPool[rng.int(0...94)] : rng.pick(ValueGenerator.scalarPool))
        }
        return String(s)
    }

    mutating func integer() -> PlistValue {
        let boundaries: [Int64] = [
            0, 1, 14, 15, 16, 127, 128, 255, 256, 65535, 65536, 0xFFFF_FFFF, 0x1_0000_0000, .max, -1, -128, -256, .min,
        ]
        switch rng.int(0...5) {
        case 0: return .int(rng.pick(boundaries))
        case 1: return .uint(UInt64(Int64.max) + 1 + rng.next() % (UInt64.max - UInt64(Int64.max)))
        case 2: return .int(Int64(bitPattern: rng.next()))
        default:
            // A random width, so every integer size gets exercised.
            let bits = rng.int(1...63)
            let v = Int64(rng.next() >> UInt64(64 - bits))
            return .int(rng.chance(0.2) ? -v : v)
        }
    }

    mutating func real() -> Double {
        switch rng.int(0...9) {
        case 0:
            var specials: [Double] = [0, 1, -1, .pi, 0.1, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e15, 1e16]
            if options.negativeZero { specials.append(-0.0) }
            if options.infinities { specials += [.infinity, -.infinity] }
            return rng.pick(specials)
        case 1 where options.nan:
            return Double(bitPattern: 0x7FF0_0000_0000_0001 | (rng.next() & 0x000F_FFFF_FFFF_FFFF))
        case 2: return Double(rng.int(-1_000_000...1_000_000))
        default:
            // A random finite bit pattern covers subnormals, huge and tiny magnitudes.
            while true {
                let d = Double(bitPattern: rng.next())
                if d.isFinite, options.negativeZero || d != 0 || d.sign == .plus { return d }
            }
        }
    }

    mutating func date() -> Date {
        let seconds: Double
        if options.modestDates {
            // 1900...2100, in eighths of a second: exact in binary and in Python's microsecond datetimes.
            seconds = Double(rng.int(-3_187_296_000...3_124_137_600)) + (options.fractionalDates ? Double(rng.int(0...7)) / 8 : 0)
        } else if options.fractionalDates {
            seconds = Double.random(in: -1e11...1e11, using: &rng)
        } else {
            seconds = Double(rng.int(-100_000_000_000...100_000_000_000))
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    mutating func scalar() -> PlistValue {
        while true {
            switch rng.int(0...8) {
            case 0: return .bool(rng.chance(0.5))
            case 1, 2: return integer()
            case 3: return .real(real())
            case 4 where options.dates: return .date(date())
            case 5 where options.data:
                let n = rng.chance(0.2) ? rng.int(14...300) : rng.int(0...13)
                return .data(Data(rng.bytes(n)))
            case 6, 7: return .string(string())
            case 8 where options.uids:
                let shift = UInt64(rng.int((64 - options.uidBits)...63))
                return .uid(rng.next() >> shift)
            default: continue
            }
        }
    }

    mutating func collectionCount() -> Int {
        rng.chance(0.1) ? rng.int(14...17) : rng.int(0...5)
    }

    mutating func value(depth: Int = 0) -> PlistValue {
        guard depth < options.maxDepth, rng.chance(depth == 0 ? 0.8 : 0.35) else { return scalar() }
        switch rng.int(0...2) {
        case 0:
            return .array((0..<collectionCount()).map { _ in value(depth: depth + 1) })
        case 1 where options.sets:
            return .set((0..<collectionCount()).map { _ in value(depth: depth + 1) })
        default:
            var d: [String: PlistValue] = [:]
            for _ in 0..<collectionCount() { d[string()] = value(depth: depth + 1) }
            return .dict(d)
        }
    }
}

// MARK: - Strict comparison

/// Deep equality that is stricter than `==`: reals and dates compare by bit pattern (so -0.0 ≠ 0.0 and
/// NaN == NaN), strings by Unicode scalars (so "é" ≠ "e\u{301}"), and a set never equals an array.
func identical(_ a: PlistValue, _ b: PlistValue) -> Bool {
    switch (a, b) {
    case (.bool(let x), .bool(let y)): return x == y
    case (.int(let x), .int(let y)): return x == y
    case (.uint(let x), .uint(let y)): return x == y
    case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
    case (.date(let x), .date(let y)):
        return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
    case (.data(let x), .data(let y)): return x == y
    case (.string(let x), .string(let y)): return sameScalars(x, y)
    case (.uid(let x), .uid(let y)): return x == y
    case (.array(let x), .array(let y)), (.set(let x), .set(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
    case (.dict(let x), .dict(let y)):
        guard x.count == y.count else { return false }
        let xs = x.sorted { $0.key < $1.key }
        let ys = y.sorted { $0.key < $1.key }
        return zip(xs, ys).allSatisfy { sameScalars($0.key, $1.key) && identical($0.value, $1.value) }
    default: return false
    }
}

func sameScalars(_ a: String, _ b: String) -> Bool {
    a.unicodeScalars.elementsEqual(b.unicodeScalars)
}

/// Maps what a lossy format cannot carry onto what it reads back: sets become arrays,
/// dates are truncated to whole seconds (as XML plists write them).
func normalisedForXML(_ v: PlistValue) -> PlistValue {
    switch v {
    case .array(let a), .set(let a): return .array(a.map(normalisedForXML))
    case .dict(let d): return .dict(d.mapValues(normalisedForXML))
    case .date(let d): return .date(Date(timeIntervalSince1970: floor(d.timeIntervalSince1970)))
    default: return v
    }
}

/// The number of objects in the value as a writer that uniques nothing would write it.
func objectCountWithoutUniquing(_ v: PlistValue) -> Int {
    switch v {
    case .array(let a), .set(let a): return 1 + a.reduce(0) { $0 + objectCountWithoutUniquing($1) }
    case .dict(let d): return 1 + d.reduce(0) { $0 + 1 + objectCountWithoutUniquing($1.value) }
    default: return 1
    }
}

// MARK: - Binary plist structure

/// The 32-byte bplist00 trailer, read back from an encoded file.
struct Trailer: Equatable, CustomStringConvertible {
    var offsetIntSize: Int
    var objectRefSize: Int
    var numObjects: UInt64
    var topObject: UInt64
    var offsetTableOffset: UInt64

    init(_ bytes: [UInt8]) {
        let t = bytes.count - 32
        offsetIntSize = Int(bytes[t + 6])
        objectRefSize = Int(bytes[t + 7])
        numObjects = bigEndian(bytes[(t + 8)..<(t + 16)])
        topObject = bigEndian(bytes[(t + 16)..<(t + 24)])
        offsetTableOffset = bigEndian(bytes[(t + 24)..<(t + 32)])
    }

    var description: String {
        "Trailer(offsetIntSize: \(offsetIntSize), objectRefSize: \(objectRefSize), numObjects: \(numObjects), top: \(topObject), table: \(offsetTableOffset))"
    }
}

/// Where object `index` starts, read through the trailer and the offset table.
func objectOffset(_ bytes: [UInt8], _ index: Int) -> Int {
    let trailer = Trailer(bytes)
    let at = Int(trailer.offsetTableOffset) + index * trailer.offsetIntSize
    return Int(bigEndian(bytes[at..<(at + trailer.offsetIntSize)]))
}

/// Where the top object starts.
func topObjectOffset(_ bytes: [UInt8]) -> Int {
    objectOffset(bytes, Int(Trailer(bytes).topObject))
}

func bigEndian(_ bytes: some Collection<UInt8>) -> UInt64 {
    bytes.reduce(0) { $0 << 8 | UInt64($1) }
}

func bigEndianBytes(_ v: UInt64, width: Int) -> [UInt8] {
    (0..<width).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * (width - 1 - $0))) }
}

/// Raw object encodings for hand-built documents.
enum Obj {
    static func header(_ nibble: UInt8, count: Int) -> [UInt8] {
        if count < 15 { return [nibble << 4 | UInt8(count)] }
        if count <= 0xFF { return [nibble << 4 | 0xF, 0x10, UInt8(count)] }
        if count <= 0xFFFF { return [nibble << 4 | 0xF, 0x11] + bigEndianBytes(UInt64(count), width: 2) }
        return [nibble << 4 | 0xF, 0x12] + bigEndianBytes(UInt64(count), width: 4)
    }

    static func int(_ v: UInt8) -> [UInt8] { [0x10, v] }

    static func ascii(_ s: String) -> [UInt8] { header(0x5, count: s.utf8.count) + Array(s.utf8) }

    static func utf16(_ units: [UInt16]) -> [UInt8] {
        header(0x6, count: units.count) + units.flatMap { bigEndianBytes(UInt64($0), width: 2) }
    }

    static func refs(_ r: [Int], size: Int) -> [UInt8] { r.flatMap { bigEndianBytes(UInt64($0), width: size) } }

    static func array(_ r: [Int], refSize: Int = 1) -> [UInt8] { header(0xA, count: r.count) + refs(r, size: refSize) }

    static func set(_ r: [Int], refSize: Int = 1) -> [UInt8] { header(0xC, count: r.count) + refs(r, size: refSize) }

    static func dict(keys: [Int], values: [Int], refSize: Int = 1) -> [UInt8] {
        header(0xD, count: keys.count) + refs(keys, size: refSize) + refs(values, size: refSize)
    }
}

/// Hand-assembles a bplist00 file: header, objects, offset table, trailer, with every field overridable.
struct BPlistAssembler {
    var objects: [[UInt8]]
    var top: UInt64 = 0
    var refSize: UInt8 = 1
    /// The width the offset table is written with.
    var offsetIntSize: UInt8 = 1
    /// Trailer values; nil means "what was actually written".
    var trailerOffsetIntSize: UInt8?
    var trailerRefSize: UInt8?
    var numObjects: UInt64?
    var tableOffset: UInt64?
    /// Replaces the offset-table entry of the object at the key.
    var offsetOverrides: [Int: UInt64] = [:]
    /// Bytes inserted between the offset table and the trailer.
    var gap: [UInt8] = []
    var magic: [UInt8] = Array("bplist00".utf8)

    init(_ objects: [[UInt8]]) { self.objects = objects }

    func bytes() -> [UInt8] {
        var out = magic
        var offsets: [UInt64] = []
        for object in objects {
            offsets.append(UInt64(out.count))
            out += object
        }
        let table = out.count
        for (i, o) in offsets.enumerated() {
            out += bigEndianBytes(offsetOverrides[i] ?? o, width: Int(offsetIntSize))
        }
        out += gap
        out += [0, 0, 0, 0, 0, 0, trailerOffsetIntSize ?? offsetIntSize, trailerRefSize ?? refSize]
        out += bigEndianBytes(numObjects ?? UInt64(objects.count), width: 8)
        out += bigEndianBytes(top, width: 8)
        out += bigEndianBytes(tableOffset ?? UInt64(table), width: 8)
        return out
    }
}

/// A chain of `depth` arrays, each holding the next; the innermost holds the integer 1.
func nestedArrays(_ depth: Int) -> PlistValue {
    var v: PlistValue = .int(1)
    for _ in 0..<depth { v = .array([v]) }
    return v
}

// MARK: - Error expectations

/// Expects decoding `bytes` as bplist00 to fail with `kind` and a byte offset inside the input.
@discardableResult
func expectBinaryError(
    _ kind: PlistError.Kind, _ bytes: [UInt8], _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> PlistError? {
    expectPlistError(kind, comment, sourceLocation: sourceLocation) { () throws(PlistError) -> PlistValue in
        try BinaryPlist.decode(bytes)
    }.map { error in
        #expect(error.offset != nil, "a binary error must say where: \(error)", sourceLocation: sourceLocation)
        if let offset = error.offset {
            #expect((0...bytes.count).contains(offset), "offset \(offset) outside the \(bytes.count)-byte input", sourceLocation: sourceLocation)
        }
        return error
    }
}

/// Expects `body` to throw a `PlistError` of `kind`, and returns it.
@discardableResult
func expectPlistError<T>(
    _ kind: PlistError.Kind, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws(PlistError) -> T
) -> PlistError? {
    do throws(PlistError) {
        let value = try body()
        Issue.record("expected PlistError.\(kind), but got a value: \(value). \(comment.map { "\($0)" } ?? "")", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(error.kind == kind, "expected .\(kind), got .\(error.kind): \(error). \(comment.map { "\($0)" } ?? "")", sourceLocation: sourceLocation)
        return error
    }
}

// MARK: - External tools

enum ExternalTool {
    static func path(_ name: String) -> String? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/local/bin", "/usr/bin", "/bin"]
        for dir in dirs where !dir.isEmpty {
            let candidate = dir + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static let python3 = path("python3")
    static let plistutil = path("plistutil")
}

struct ToolResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

struct ToolFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs `executable` with output captured to files (no pipe deadlocks) and waits for it.
func runTool(_ executable: String, _ arguments: [String], in dir: URL) throws -> ToolResult {
    let id = UUID().uuidString
    let outURL = dir.appendingPathComponent("stdout-\(id)")
    let errURL = dir.appendingPathComponent("stderr-\(id)")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = dir
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = out
    process.standardError = err
    try process.run()
    process.waitForExit()
    try out.close()
    try err.close()
    let stdout = String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
    let stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
    try? FileManager.default.removeItem(at: outURL)
    try? FileManager.default.removeItem(at: errURL)
    return ToolResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
}

/// Runs a Python script (written to a file in `dir`) and requires it to succeed.
func runPython(_ script: String, _ arguments: [String], in dir: URL) throws -> ToolResult {
    guard let python = ExternalTool.python3 else { throw ToolFailure(description: "python3 not found") }
    let scriptURL = dir.appendingPathComponent("script-\(UUID().uuidString).py")
    try Data(script.utf8).write(to: scriptURL)
    let result = try runTool(python, [scriptURL.path] + arguments, in: dir)
    guard result.status == 0 else {
        throw ToolFailure(description: "python3 exited \(result.status): \(result.stderr)")
    }
    return result
}

/// Calls `body` with a fresh, uniquely named temporary directory and removes it afterwards.
func withTemporaryDirectory<T>(_ label: String, _ body: (URL) throws -> T) throws -> T {
    let dir = FileManager.default.temporaryDirectory
        .appendingPathComponent("folio-core-tests-\(label)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    return try body(dir)
}

func writeFile(_ bytes: [UInt8], _ url: URL) throws {
    try Data(bytes).write(to: url)
}

func readFile(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
}

func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
