import FolioPublished
import Foundation
import Metrics
import Synchronization

/// Which channel's `manifest.plist` or `head.plist` a request target fetches, read from its
/// bytes (no String is made, nothing is allocated).
enum ManifestFetch: Equatable {
    /// `/manifest.plist` or `/head.plist`.
    case production
    /// `/channels/<name>/manifest.plist` or `…/head.plist`: the name's byte offsets in the target.
    case channel(Range<Int>)

    /// What `target` fetches; nil for anything but a channel's manifest or head. A query or
    /// fragment is ignored and an absolute-form target read from its path, unless `plainPath`
    /// says the target is a path as it stands. A name that is not a channel name
    /// (`Channel.isValidName`, or `production`) is nil.
    static func of(_ target: UnsafeRawBufferPointer, plainPath: Bool) -> ManifestFetch? {
        guard let path = plainPath ? 0..<target.count : pathRange(target) else { return nil }
        let nameEnd: Int
        if path.count >= 15, matches(target, at: path.upperBound - 15, "/manifest.plist") {
            nameEnd = path.upperBound - 15
        } else if path.count >= 11, matches(target, at: path.upperBound - 11, "/head.plist") {
            nameEnd = path.upperBound - 11
        } else {
            return nil
        }
        if nameEnd == path.lowerBound { return .production }
        guard matches(target, at: path.lowerBound, "/channels/"), path.lowerBound + 10 <= nameEnd else { return nil }
        let name = (path.lowerBound + 10)..<nameEnd
        return isChannelName(UnsafeRawBufferPointer(rebasing: target[name])) ? .channel(name) : nil
    }

    /// The path of a target: from its first `/` (after `scheme://authority` in absolute form)
    /// to its query or fragment.
    private static func pathRange(_ target: UnsafeRawBufferPointer) -> Range<Int>? {
        guard let first = target.first else { return nil }
        var start = 0
        if first != UInt8(ascii: "/") {
            guard let colon = target.firstIndex(of: UInt8(ascii: ":")), matches(target, at: colon, "://"),
                let slash = target[(colon + 3)...].firstIndex(of: UInt8(ascii: "/"))
            else { return nil }
            start = slash
        }
        let end = target[start...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? target.count
        return start..<end
    }

    /// Whether `literal`'s bytes are at `offset` in `bytes`.
    @inline(__always)
    private static func matches(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard offset >= 0, offset + n <= bytes.count else { return false }
        return memcmp(bytes.baseAddress! + offset, literal.utf8Start, n) == 0
    }

    /// `Channel.isValidName` on bytes (1 to 32 lowercase letters, digits and `-`, not first),
    /// and not `production` (the root's channel, never under `channels/`).
    static func isChannelName(_ name: UnsafeRawBufferPointer) -> Bool {
        Channel.isValidName(bytes: name) && !(name.count == 10 && matches(name, at: 0, "production"))
    }
}

/// Values by short byte names, for at most `limit` names: a name past them gets none, so
/// names taken from requests cannot grow memory without bound.
struct BoundedNames<Value> {
    /// The most names held.
    let limit: Int
    private var names: [[UInt8]] = []
    private var values: [Value] = []

    /// An empty table holding at most `limit` names.
    init(limit: Int) { self.limit = limit }

    /// The names held.
    var count: Int { names.count }

    /// The value of `name`, made by `make` (given the name) on its first use while there is
    /// room; nil for a new name once `limit` names are held.
    mutating func value(for name: UnsafeRawBufferPointer, make: (String) -> Value) -> Value? {
        if let i = names.firstIndex(where: { $0.count == name.count && $0.elementsEqual(name) }) { return values[i] }
        guard names.count < limit else { return nil }
        names.append(Array(name))
        values.append(make(String(decoding: name, as: UTF8.self)))
        return values[values.count - 1]
    }
}

/// A table of sendable values is sendable (it holds them and their names' bytes only).
extension BoundedNames: Sendable where Value: Sendable {}

/// Answered fetches of each channel's manifest or head, `folio_edge_manifest_requests_total`
/// with a `channel` dimension: production's counter made at start, another channel's on its
/// first fetch, at most `limit` of them, then `channel="other"`.
final class ManifestFetchCounters: Sendable {
    /// The metric's name.
    static let label = "folio_edge_manifest_requests_total"

    private let production: Metrics.Counter
    private let other: Metrics.Counter
    private let named: Mutex<BoundedNames<Metrics.Counter>>

    /// Makes production's and the overflow's counters (after `MetricsSystem.bootstrap`).
    init(limit: Int = 64) {
        production = Self.counter("production")
        other = Self.counter("other")
        named = Mutex(BoundedNames(limit: limit))
    }

    /// The counter of one channel name.
    private static func counter(_ channel: String) -> Metrics.Counter {
        Metrics.Counter(label: label, dimensions: [("channel", channel)])
    }

    /// Counts a fetch of the manifest or head `target` names, if it names one (see `ManifestFetch.of`).
    func record(target: UnsafeRawBufferPointer, plainPath: Bool) {
        switch ManifestFetch.of(target, plainPath: plainPath) {
        case nil: return
        case .production: production.increment()
        case .channel(let range): counter(UnsafeRawBufferPointer(rebasing: target[range])).increment()
        }
    }

    /// The same for a target held as a String (the cache tier's).
    func record(target: String) {
        var target = target
        target.withUTF8 { record(target: UnsafeRawBufferPointer($0), plainPath: false) }
    }

    /// The counter of a channel other than production: its own, or `other` once the table is full.
    private func counter(_ name: UnsafeRawBufferPointer) -> Metrics.Counter {
        named.withLock { table in table.value(for: name, make: Self.counter) } ?? other
    }
}
