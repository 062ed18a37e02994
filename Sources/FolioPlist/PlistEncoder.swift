import Foundation

/// Encodes `Encodable` values as property lists in binary, XML or JSON form.
///
/// Shaped like Foundation's `PropertyListEncoder`. `Date` becomes a plist date, `Data` plist
/// data, `URL` its absolute string; `nil` written with `encodeNil` becomes the string `"$null"`
/// (what Foundation writes), while synthesized conformances leave out `nil` optionals. Unlike
/// Foundation, a top-level scalar (a "fragment") is allowed. Binary output is byte-identical to
/// `BinaryPlist.encode(_:)` of the equivalent ``PlistValue``, but is written without building one.
public struct PlistEncoder: Sendable {
    /// The form `encode(_:)` produces; binary by default.
    public var outputFormat: PlistFormat = .binary

    /// Values the encoded types can read through `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates an encoder that writes binary property lists.
    public init() {}

    /// Creates an encoder that writes property lists in `outputFormat`.
    public init(outputFormat: PlistFormat) { self.outputFormat = outputFormat }

    /// Encodes `value` as a property list in ``outputFormat``.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        Data(try encodeToBytes(value))
    }

    /// Encodes `value` as a property list in ``outputFormat``, returning the bytes as an array.
    @_disfavoredOverload
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try encodeToBytes(value)
    }

    /// Encodes `value` into a ``PlistValue`` tree, the form the XML and JSON writers take.
    public func encodeValue<T: Encodable>(_ value: T) throws -> PlistValue {
        try encodeStorage(value).plistValue(0)
    }

    private func encodeToBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        let storage = try encodeStorage(value)
        do throws(PlistError) {
            switch outputFormat {
            case .binary: return BinaryPlist.encode(storage)
            case .xml: return try XMLPlist.encode(storage.plistValue(0))
            case .json: return try JSONPlist.encode(storage.plistValue(0))
            }
        } catch {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "Unable to encode the value as a \(outputFormat.rawValue) property list: \(error)",
                underlyingError: error))
        }
    }

    /// Runs `value`'s `encode(to:)` into a node arena.
    func encodeStorage<T: Encodable>(_ value: T) throws -> PlistEncodingStorage {
        let storage = PlistEncodingStorage(userInfo: userInfo)
        storage.nodes.append(PlistEncodingStorage.Node(kind: .empty))
        if !storage.setPrimitive(value, at: 0) {
            let root = _PlistEncoderImpl(storage: storage, node: 0, parent: nil, key: nil)
            if let array = value as? any PlistEncodableArray {
                storage.become(.array, 0)
                try array.encodePlistElements(root, node: 0, path: nil)
            } else {
                try value.encode(to: root)
            }
        }
        if storage.nodes[0].kind == .empty {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
        }
        return storage
    }
}

/// A coding key for an index into an unkeyed container, named like Foundation's ("Index 3").
struct PlistIndexKey: CodingKey {
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.index = intValue }
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
}

/// The `"super"` key of `superEncoder()` and `superDecoder()`.
struct PlistSuperKey: CodingKey {
    init() {}
    init?(stringValue: String) { guard stringValue == "super" else { return nil } }
    init?(intValue: Int) { return nil }
    var stringValue: String { "super" }
    var intValue: Int? { nil }
}

/// What an encode writes, kept flat: one array of nodes linked parent to children, so encoding
/// allocates per string and per container box rather than per value. Dictionary entries are
/// kept in the order they were encoded (later duplicates win) and sorted only when written.
final class PlistEncodingStorage {
    /// One value: 32 bytes (the payload first, so the kind packs after the links).
    struct Node {
        enum Kind: UInt8 { case empty, bool, int, uint, real, date, data, string, array, dict }
        /// The payload: a boolean, integer, real or date's bits; the index into `strings` or `datas`.
        var bits: UInt64 = 0
        /// The index into `strings` of the key, for an entry of a dictionary.
        var key: Int32 = -1
        var first: Int32 = -1
        var last: Int32 = -1
        var next: Int32 = -1
        var count: Int32 = 0
        var kind: Kind

        init(kind: Kind, bits: UInt64 = 0, key: Int32 = -1, next: Int32 = -1) {
            self.kind = kind
            self.bits = bits
            self.key = key
            self.next = next
        }
    }

    // Only ever used by one encode at a time, on one thread; no run-time exclusivity checks.
    @exclusivity(unchecked) var nodes: [Node] = []
    @exclusivity(unchecked) var strings: [String] = []
    @exclusivity(unchecked) var datas: [Data] = []
    let userInfo: [CodingUserInfoKey: Any]

    init(userInfo: [CodingUserInfoKey: any Sendable]) {
        self.userInfo = userInfo
        nodes.reserveCapacity(256)
        strings.reserveCapacity(128)
    }

    /// Appends a child to the container `parent` (under `key` in a dictionary, or -1).
    @inline(__always)
    func append(_ node: Node, to parent: Int) -> Int {
        let index = nodes.count
        var node = node
        node.next = -1
        nodes.append(node)
        nodes.withUnsafeMutableBufferPointer { p in
            let last = p[parent].last
            if last < 0 { p[parent].first = Int32(index) } else { p[Int(last)].next = Int32(index) }
            p[parent].last = Int32(index)
            p[parent].count += 1
        }
        return index
    }

    @inline(__always)
    func keyIndex(_ key: some CodingKey) -> Int32 {
        strings.append(key.stringValue)
        return Int32(strings.count - 1)
    }

    /// Makes `node` a container of `kind`, emptying it unless it already is one.
    func become(_ kind: Node.Kind, _ node: Int) {
        if nodes[node].kind == kind { return }
        nodes[node] = Node(kind: kind, key: nodes[node].key, next: nodes[node].next)
    }

    /// Sets `node` to a scalar, keeping its key and place among its siblings.
    @inline(__always)
    func set(_ node: Int, _ kind: Node.Kind, _ bits: UInt64) {
        nodes[node] = Node(kind: kind, bits: bits, key: nodes[node].key, next: nodes[node].next)
    }

    @inline(__always)
    static func scalar(_ kind: Node.Kind, _ bits: UInt64, key: Int32) -> Node {
        Node(kind: kind, bits: bits, key: key)
    }

    @inline(__always)
    func stringNode(_ s: String, key: Int32) -> Node {
        strings.append(s)
        return Node(kind: .string, bits: UInt64(strings.count - 1), key: key)
    }

    @inline(__always)
    static func integerNode(_ v: Int64, key: Int32) -> Node { Node(kind: .int, bits: UInt64(bitPattern: v), key: key) }

    @inline(__always)
    static func integerNode(_ v: UInt64, key: Int32) -> Node {
        v <= UInt64(Int64.max) ? Node(kind: .int, bits: v, key: key) : Node(kind: .uint, bits: v, key: key)
    }

    /// The node for `value` when it is a type written as a single plist scalar, else nil.
    @inline(__always)
    func primitiveNode<T: Encodable>(_ value: T, key: Int32) -> Node? {
        if T.self == String.self { return stringNode(unsafeBitCast(value, to: String.self), key: key) }
        if T.self == Int.self { return Self.integerNode(Int64(unsafeBitCast(value, to: Int.self)), key: key) }
        if T.self == Double.self { return Node(kind: .real, bits: unsafeBitCast(value, to: Double.self).bitPattern, key: key) }
        if T.self == Bool.self { return Node(kind: .bool, bits: unsafeBitCast(value, to: Bool.self) ? 1 : 0, key: key) }
        if T.self == Date.self {
            return Node(kind: .date, bits: unsafeBitCast(value, to: Date.self).timeIntervalSinceReferenceDate.bitPattern, key: key)
        }
        if T.self == Data.self {
            datas.append(unsafeBitCast(value, to: Data.self))
            return Node(kind: .data, bits: UInt64(datas.count - 1), key: key)
        }
        if T.self == URL.self { return stringNode(unsafeBitCast(value, to: URL.self).absoluteString, key: key) }
        if T.self == Float.self { return Node(kind: .real, bits: Double(unsafeBitCast(value, to: Float.self)).bitPattern, key: key) }
        if T.self == Int64.self { return Self.integerNode(unsafeBitCast(value, to: Int64.self), key: key) }
        if T.self == Int32.self { return Self.integerNode(Int64(unsafeBitCast(value, to: Int32.self)), key: key) }
        if T.self == Int16.self { return Self.integerNode(Int64(unsafeBitCast(value, to: Int16.self)), key: key) }
        if T.self == Int8.self { return Self.integerNode(Int64(unsafeBitCast(value, to: Int8.self)), key: key) }
        if T.self == UInt.self { return Self.integerNode(UInt64(unsafeBitCast(value, to: UInt.self)), key: key) }
        if T.self == UInt64.self { return Self.integerNode(unsafeBitCast(value, to: UInt64.self), key: key) }
        if T.self == UInt32.self { return Self.integerNode(UInt64(unsafeBitCast(value, to: UInt32.self)), key: key) }
        if T.self == UInt16.self { return Self.integerNode(UInt64(unsafeBitCast(value, to: UInt16.self)), key: key) }
        if T.self == UInt8.self { return Self.integerNode(UInt64(unsafeBitCast(value, to: UInt8.self)), key: key) }
        return nil
    }

    /// Writes `value` into `node` when it is a scalar type; false when it must encode itself.
    func setPrimitive<T: Encodable>(_ value: T, at node: Int) -> Bool {
        guard var scalar = primitiveNode(value, key: nodes[node].key) else { return false }
        scalar.next = nodes[node].next
        nodes[node] = scalar
        return true
    }

    /// The tree under `node` as a ``PlistValue``; later duplicate keys replace earlier values.
    func plistValue(_ node: Int) -> PlistValue {
        let n = nodes[node]
        switch n.kind {
        case .empty: return .dict([:])
        case .bool: return .bool(n.bits != 0)
        case .int: return .int(Int64(bitPattern: n.bits))
        case .uint: return .uint(n.bits)
        case .real: return .real(Double(bitPattern: n.bits))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: n.bits)))
        case .data: return .data(datas[Int(n.bits)])
        case .string: return .string(strings[Int(n.bits)])
        case .array:
            var items: [PlistValue] = []
            items.reserveCapacity(Int(n.count))
            var c = Int(n.first)
            while c >= 0 {
                items.append(plistValue(c))
                c = Int(nodes[c].next)
            }
            return .array(items)
        case .dict:
            var dict: [String: PlistValue] = [:]
            dict.reserveCapacity(Int(n.count))
            var c = Int(n.first)
            while c >= 0 {
                dict[strings[Int(nodes[c].key)]] = plistValue(c)
                c = Int(nodes[c].next)
            }
            return .dict(dict)
        }
    }
}

/// The `Encoder` handed to each value that encodes itself; it is also its path node.
final class _PlistEncoderImpl: Encoder, SingleValueEncodingContainer, CodingPathNode {
    let storage: PlistEncodingStorage
    let node: Int
    let parent: _PlistEncoderImpl?
    let key: (any CodingKey)?

    init(storage: PlistEncodingStorage, node: Int, parent: _PlistEncoderImpl?, key: (any CodingKey)?) {
        self.storage = storage
        self.node = node
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] { CodingPath.of(self) }

    var userInfo: [CodingUserInfoKey: Any] { storage.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        storage.become(.dict, node)
        return KeyedEncodingContainer(_PlistKeyedEncodingContainer<Key>(encoder: self, node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        storage.become(.array, node)
        return _PlistUnkeyedEncodingContainer(encoder: self, node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    /// Encodes `value` as a new child of `parent`, under `key` (a dictionary entry) or -1.
    @inline(__always)
    func encodeChild<T: Encodable>(_ value: T, parent: Int, key: Int32, path: any CodingKey) throws {
        if let scalar = storage.primitiveNode(value, key: key) {
            _ = storage.append(scalar, to: parent)
            return
        }
        if let array = value as? any PlistEncodableArray {
            let child = storage.append(PlistEncodingStorage.Node(kind: .array, key: key), to: parent)
            try array.encodePlistElements(self, node: child, path: path)
            return
        }
        let child = storage.append(PlistEncodingStorage.Node(kind: .empty, key: key), to: parent)
        try value.encode(to: _PlistEncoderImpl(storage: storage, node: child, parent: self, key: path))
    }

    // SingleValueEncodingContainer: the value replaces whatever this node held.
    func encodeNil() throws { storage.set(node, .string, UInt64(storage.strings.count)); storage.strings.append("$null") }
    func encode(_ value: Bool) throws { storage.set(node, .bool, value ? 1 : 0) }
    func encode(_ value: String) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: Double) throws { storage.set(node, .real, value.bitPattern) }
    func encode(_ value: Float) throws { storage.set(node, .real, Double(value).bitPattern) }
    func encode(_ value: Int) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: Int8) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: Int16) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: Int32) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: Int64) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: UInt) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: UInt8) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: UInt16) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: UInt32) throws { _ = storage.setPrimitive(value, at: node) }
    func encode(_ value: UInt64) throws { _ = storage.setPrimitive(value, at: node) }
    func encode<T: Encodable>(_ value: T) throws {
        if storage.setPrimitive(value, at: node) { return }
        storage.set(node, .empty, 0)
        try value.encode(to: self)
    }
}

struct _PlistKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: _PlistEncoderImpl
    let node: Int

    var codingPath: [any CodingKey] { encoder.codingPath }

    @inline(__always)
    private func add(_ make: (Int32) -> PlistEncodingStorage.Node, _ key: Key) {
        let storage = encoder.storage
        _ = storage.append(make(storage.keyIndex(key)), to: node)
    }

    mutating func encodeNil(forKey key: Key) throws { add({ encoder.storage.stringNode("$null", key: $0) }, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { add({ .init(kind: .bool, bits: value ? 1 : 0, key: $0) }, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { add({ encoder.storage.stringNode(value, key: $0) }, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { add({ .init(kind: .real, bits: value.bitPattern, key: $0) }, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { add({ .init(kind: .real, bits: Double(value).bitPattern, key: $0) }, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(Int64(value), key: $0) }, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(Int64(value), key: $0) }, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(Int64(value), key: $0) }, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(Int64(value), key: $0) }, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(value, key: $0) }, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(UInt64(value), key: $0) }, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(UInt64(value), key: $0) }, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(UInt64(value), key: $0) }, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(UInt64(value), key: $0) }, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { add({ PlistEncodingStorage.integerNode(value, key: $0) }, key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.encodeChild(value, parent: node, key: encoder.storage.keyIndex(key), path: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let storage = encoder.storage
        let child = storage.append(.init(kind: .dict, key: storage.keyIndex(key)), to: node)
        let nested = _PlistEncoderImpl(storage: storage, node: child, parent: encoder, key: key)
        return KeyedEncodingContainer(_PlistKeyedEncodingContainer<NestedKey>(encoder: nested, node: child))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let storage = encoder.storage
        let child = storage.append(.init(kind: .array, key: storage.keyIndex(key)), to: node)
        let nested = _PlistEncoderImpl(storage: storage, node: child, parent: encoder, key: key)
        return _PlistUnkeyedEncodingContainer(encoder: nested, node: child)
    }

    mutating func superEncoder() -> any Encoder { superEncoder(key: PlistSuperKey()) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key) }

    /// An encoder for a new entry, an empty dictionary until something is encoded into it.
    private func superEncoder(key: some CodingKey) -> any Encoder {
        let storage = encoder.storage
        let child = storage.append(.init(kind: .empty, key: storage.keyIndex(key)), to: node)
        return _PlistEncoderImpl(storage: storage, node: child, parent: encoder, key: key)
    }
}

struct _PlistUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: _PlistEncoderImpl
    let node: Int

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { Int(encoder.storage.nodes[node].count) }

    @inline(__always)
    private func add(_ n: PlistEncodingStorage.Node) { _ = encoder.storage.append(n, to: node) }

    mutating func encodeNil() throws { add(encoder.storage.stringNode("$null", key: -1)) }
    mutating func encode(_ value: Bool) throws { add(.init(kind: .bool, bits: value ? 1 : 0)) }
    mutating func encode(_ value: String) throws { add(encoder.storage.stringNode(value, key: -1)) }
    mutating func encode(_ value: Double) throws { add(.init(kind: .real, bits: value.bitPattern)) }
    mutating func encode(_ value: Float) throws { add(.init(kind: .real, bits: Double(value).bitPattern)) }
    mutating func encode(_ value: Int) throws { add(PlistEncodingStorage.integerNode(Int64(value), key: -1)) }
    mutating func encode(_ value: Int8) throws { add(PlistEncodingStorage.integerNode(Int64(value), key: -1)) }
    mutating func encode(_ value: Int16) throws { add(PlistEncodingStorage.integerNode(Int64(value), key: -1)) }
    mutating func encode(_ value: Int32) throws { add(PlistEncodingStorage.integerNode(Int64(value), key: -1)) }
    mutating func encode(_ value: Int64) throws { add(PlistEncodingStorage.integerNode(value, key: -1)) }
    mutating func encode(_ value: UInt) throws { add(PlistEncodingStorage.integerNode(UInt64(value), key: -1)) }
    mutating func encode(_ value: UInt8) throws { add(PlistEncodingStorage.integerNode(UInt64(value), key: -1)) }
    mutating func encode(_ value: UInt16) throws { add(PlistEncodingStorage.integerNode(UInt64(value), key: -1)) }
    mutating func encode(_ value: UInt32) throws { add(PlistEncodingStorage.integerNode(UInt64(value), key: -1)) }
    mutating func encode(_ value: UInt64) throws { add(PlistEncodingStorage.integerNode(value, key: -1)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeChild(value, parent: node, key: -1, path: PlistIndexKey(count))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let index = count
        let child = encoder.storage.append(.init(kind: .dict), to: node)
        let nested = _PlistEncoderImpl(storage: encoder.storage, node: child, parent: encoder, key: PlistIndexKey(index))
        return KeyedEncodingContainer(_PlistKeyedEncodingContainer<NestedKey>(encoder: nested, node: child))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let index = count
        let child = encoder.storage.append(.init(kind: .array), to: node)
        let nested = _PlistEncoderImpl(storage: encoder.storage, node: child, parent: encoder, key: PlistIndexKey(index))
        return _PlistUnkeyedEncodingContainer(encoder: nested, node: child)
    }

    mutating func superEncoder() -> any Encoder {
        let index = count
        let child = encoder.storage.append(.init(kind: .empty), to: node)
        return _PlistEncoderImpl(storage: encoder.storage, node: child, parent: encoder, key: PlistIndexKey(index))
    }
}

/// Arrays encode through this instead of `Array.encode(to:)`: the same nodes and paths, without
/// an encoder and container per array when the elements are scalars.
protocol PlistEncodableArray {
    /// Appends the elements to the array node `node`, whose path is the encoder's plus `path`
    /// (or the encoder's own, for nil).
    func encodePlistElements(_ encoder: _PlistEncoderImpl, node: Int, path: (any CodingKey)?) throws
}

extension Array: PlistEncodableArray where Element: Encodable {
    func encodePlistElements(_ encoder: _PlistEncoderImpl, node: Int, path: (any CodingKey)?) throws {
        let storage = encoder.storage
        var nested: _PlistEncoderImpl?
        for i in indices {
            if let scalar = storage.primitiveNode(self[i], key: -1) {
                _ = storage.append(scalar, to: node)
                continue
            }
            let e = nested ?? (path == nil ? encoder : _PlistEncoderImpl(storage: storage, node: node, parent: encoder, key: path))
            nested = e
            try e.encodeChild(self[i], parent: node, key: -1, path: PlistIndexKey(i))
        }
    }
}
