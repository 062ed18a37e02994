import Foundation

/// Decodes `Decodable` values from property lists in binary or JSON form, or from a ``PlistValue``
/// (which is how XML is read: FolioPlistXML's `XMLPlist.decode`, then the `decode(_:from:)` that takes the value).
///
/// Shaped like Foundation's `PropertyListDecoder`: the format is detected from the bytes, and
/// failures are `DecodingError`s carrying the coding path. Binary input is read in place, object
/// by object as the type asks for them, without building a ``PlistValue`` tree. The string
/// `"$null"` decodes as `nil` (what Foundation's encoder writes for `encodeNil`); integers are
/// range-checked (`dataCorrupted` when a number does not fit the type).
public struct PlistDecoder: Sendable {
    /// Values the decoded types can read through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// Creates a decoder.
    public init() {}

    /// Decodes a value of `type` from a binary or JSON property list.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if PlistFormat.sniff(data) == .binary {
            return try data.withUnsafeBytes { raw in try decodeBinary(type, raw) }
        }
        return try decodeText(type, Array(data))
    }

    /// Decodes a value of `type` from binary or JSON property list bytes.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if PlistFormat.sniff(bytes) == .binary {
            return try bytes.withUnsafeBytes { raw in try decodeBinary(type, raw) }
        }
        return try decodeText(type, bytes)
    }

    /// Decodes a value of `type` from binary or JSON property list bytes, also returning the
    /// format they were in.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], format: inout PlistFormat) throws -> T {
        format = PlistFormat.sniff(bytes)
        return try decode(type, from: bytes)
    }

    /// Decodes a value of `type` from a ``PlistValue`` tree.
    public func decode<T: Decodable>(_ type: T.Type, from value: PlistValue) throws -> T {
        let source = PlistValueSource(userInfo: userInfo)
        let top = source.add(value)
        return try _PlistDecoderImpl(source: source, value: top, parent: nil, key: nil, depth: 0).decodeSelf(T.self)
    }

    private func decodeBinary<T: Decodable>(_ type: T.Type, _ raw: UnsafeRawBufferPointer) throws -> T {
        let source: BinaryPlistSource
        let top: Int
        do throws(PlistError) {
            source = try BinaryPlistSource(raw, userInfo: userInfo)
            top = try source.top()
        } catch {
            throw Self.corrupt(error)
        }
        return try _PlistDecoderImpl(source: source, value: top, parent: nil, key: nil, depth: 0).decodeSelf(T.self)
    }

    private func decodeText<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        try decode(type) { () throws(PlistError) in try PlistValue.decode(bytes) }
    }

    /// Decodes a value of `type` from the tree `read` makes, whose failure is `dataCorrupted`.
    package func decode<T: Decodable>(_ type: T.Type, reading read: () throws(PlistError) -> PlistValue) throws -> T {
        let value: PlistValue
        do throws(PlistError) {
            value = try read()
        } catch {
            throw Self.corrupt(error)
        }
        return try decode(type, from: value)
    }

    private static func corrupt(_ error: PlistError) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: [], debugDescription: "The given data was not a valid property list: \(error)", underlyingError: error))
    }
}

/// The `Decoder` for one value; it is also its path node (parent and key).
final class _PlistDecoderImpl: Decoder, SingleValueDecodingContainer, CodingPathNode {
    let source: PlistDecodingSource
    let value: Int
    let parent: _PlistDecoderImpl?
    let key: (any CodingKey)?
    let depth: Int
    /// Where the next key lookup in this value's dictionary starts.
    var hint = 0

    init(source: PlistDecodingSource, value: Int, parent: _PlistDecoderImpl?, key: (any CodingKey)?, depth: Int) {
        self.source = source
        self.value = value
        self.parent = parent
        self.key = key
        self.depth = depth
    }

    var codingPath: [any CodingKey] { CodingPath.of(self) }

    var userInfo: [CodingUserInfoKey: Any] { source.userInfo }

    func path(_ key: (any CodingKey)?) -> [any CodingKey] {
        guard let key else { return codingPath }
        return codingPath + [key]
    }

    // MARK: Errors

    func corrupt(_ error: PlistError, _ key: (any CodingKey)?) -> DecodingError {
        .dataCorrupted(.init(codingPath: path(key), debugDescription: "The property list is damaged: \(error)", underlyingError: error))
    }

    func mismatch(_ type: Any.Type, _ r: Int, _ key: (any CodingKey)?) -> DecodingError {
        if source.isNull(r) {
            return .valueNotFound(type, .init(codingPath: path(key), debugDescription: "Expected value of type \(type) but found null instead."))
        }
        return .typeMismatch(type, .init(codingPath: path(key), debugDescription: "Expected to decode \(type) but found \(source.describe(r)) instead."))
    }

    // MARK: Unwrapping scalars

    @inline(__always)
    func unwrapString(_ r: Int, _ key: (any CodingKey)?) throws -> String {
        let s: String?
        do throws(PlistError) { s = try source.string(r) } catch { throw corrupt(error, key) }
        guard let s, !source.isNull(r) else { throw mismatch(String.self, r, key) }
        return s
    }

    @inline(__always)
    func unwrapBool(_ r: Int, _ key: (any CodingKey)?) throws -> Bool {
        guard let b = source.bool(r) else { throw mismatch(Bool.self, r, key) }
        return b
    }

    @inline(__always)
    func unwrapNumber(_ type: Any.Type, _ r: Int, _ key: (any CodingKey)?) throws -> PlistNumber {
        let n: PlistNumber?
        do throws(PlistError) { n = try source.number(r) } catch { throw corrupt(error, key) }
        guard let n else { throw mismatch(type, r, key) }
        return n
    }

    @inline(__always)
    func unwrapInteger<T: FixedWidthInteger>(_ type: T.Type, _ r: Int, _ key: (any CodingKey)?) throws -> T {
        switch try unwrapNumber(T.self, r, key) {
        case .int(let i):
            if let v = T(exactly: i) { return v }
            throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Parsed property list number <\(i)> does not fit in \(T.self)."))
        case .uint(let u):
            if let v = T(exactly: u) { return v }
            throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Parsed property list number <\(u)> does not fit in \(T.self)."))
        case .real(let d):
            if let v = T(exactly: d) { return v }
            throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Property list number <\(d)> does not fit in \(T.self)."))
        }
    }

    @inline(__always)
    func unwrapDouble(_ r: Int, _ key: (any CodingKey)?) throws -> Double {
        switch try unwrapNumber(Double.self, r, key) {
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        case .real(let d): return d
        }
    }

    func unwrapFloat(_ r: Int, _ key: (any CodingKey)?) throws -> Float {
        let d = try unwrapDouble(r, key)
        if d.isFinite, abs(d) > Double(Float.greatestFiniteMagnitude) {
            throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Property list number <\(d)> does not fit in Float."))
        }
        return Float(d)
    }

    func unwrapDate(_ r: Int, _ key: (any CodingKey)?) throws -> Date {
        let d: Date?
        do throws(PlistError) { d = try source.date(r) } catch { throw corrupt(error, key) }
        guard let d else { throw mismatch(Date.self, r, key) }
        return d
    }

    func unwrapData(_ r: Int, _ key: (any CodingKey)?) throws -> Data {
        let d: Data?
        do throws(PlistError) { d = try source.data(r) } catch { throw corrupt(error, key) }
        guard let d else { throw mismatch(Data.self, r, key) }
        return d
    }

    /// A URL from its string, or from the `{relative, base}` dictionary URL's own `Codable`
    /// writes (Foundation's plist encoder on Linux).
    func unwrapURL(_ r: Int, _ key: (any CodingKey)?) throws -> URL {
        let s: String?
        do throws(PlistError) { s = try source.string(r) } catch { throw corrupt(error, key) }
        if let s, !source.isNull(r) {
            guard let url = URL(string: s) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Invalid URL string."))
            }
            return url
        }
        return try URL(from: child(r, key ?? PlistSuperKey()))
    }

    /// A child decoder for `r`, one level deeper.
    @inline(__always)
    func child(_ r: Int, _ key: any CodingKey) throws -> _PlistDecoderImpl {
        guard depth < BinaryPlist.maxDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: path(key), debugDescription: "Values nest deeper than \(BinaryPlist.maxDepth) (or the property list contains itself)."))
        }
        return _PlistDecoderImpl(source: source, value: r, parent: self, key: key, depth: depth + 1)
    }

    /// Decodes `r` as `T`: scalars directly, anything else through a child decoder.
    @inline(__always)
    func decodeValue<T: Decodable>(_ type: T.Type, _ r: Int, _ key: any CodingKey) throws -> T {
        if Self.isScalar(T.self) { return try decodeScalar(T.self, r, key) }
        if let array = T.self as? any PlistDecodableArray.Type { return try Self.decodeArray(array, child(r, key)) }
        return try T(from: child(r, key))
    }

    private static func decodeArray<A: PlistDecodableArray, T>(_ type: A.Type, _ decoder: _PlistDecoderImpl) throws -> T {
        unsafeBitCast(try A.decodePlistArray(decoder), to: T.self)
    }

    /// This value as an array, or the error `unkeyedContainer()` throws.
    func arrayCollection() throws -> PlistCollection {
        let a: PlistCollection?
        do throws(PlistError) { a = try source.array(value) } catch { throw corrupt(error, nil) }
        guard let a else {
            if source.isNull(value) {
                throw DecodingError.valueNotFound((any UnkeyedDecodingContainer).self, .init(codingPath: codingPath, debugDescription: "Cannot get unkeyed decoding container -- found null value instead."))
            }
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "Expected to decode an array but found \(source.describe(value)) instead."))
        }
        return a
    }

    /// Whether a plist holds `T` as one scalar (decoded by ``decodeScalar(_:_:_:)``).
    @inline(__always)
    static func isScalar<T>(_ type: T.Type) -> Bool {
        T.self == String.self || T.self == Int.self || T.self == Double.self || T.self == Bool.self
            || T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Float.self
            || T.self == Int64.self || T.self == Int32.self || T.self == Int16.self || T.self == Int8.self
            || T.self == UInt.self || T.self == UInt64.self || T.self == UInt32.self || T.self == UInt16.self
            || T.self == UInt8.self
    }

    /// `r` as `T`, one of the scalar types. (No `T?` here: in unspecialised code an optional of
    /// a generic type costs a run-time metadata look-up per call.)
    @inline(__always)
    func decodeScalar<T>(_ type: T.Type, _ r: Int, _ key: (any CodingKey)?) throws -> T {
        if T.self == String.self { return unsafeBitCast(try unwrapString(r, key), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try unwrapInteger(Int.self, r, key), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try unwrapDouble(r, key), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try unwrapBool(r, key), to: T.self) }
        if T.self == Date.self { return unsafeBitCast(try unwrapDate(r, key), to: T.self) }
        if T.self == Data.self { return unsafeBitCast(try unwrapData(r, key), to: T.self) }
        if T.self == URL.self { return unsafeBitCast(try unwrapURL(r, key), to: T.self) }
        if T.self == Float.self { return unsafeBitCast(try unwrapFloat(r, key), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try unwrapInteger(Int64.self, r, key), to: T.self) }
        if T.self == Int32.self { return unsafeBitCast(try unwrapInteger(Int32.self, r, key), to: T.self) }
        if T.self == Int16.self { return unsafeBitCast(try unwrapInteger(Int16.self, r, key), to: T.self) }
        if T.self == Int8.self { return unsafeBitCast(try unwrapInteger(Int8.self, r, key), to: T.self) }
        if T.self == UInt.self { return unsafeBitCast(try unwrapInteger(UInt.self, r, key), to: T.self) }
        if T.self == UInt64.self { return unsafeBitCast(try unwrapInteger(UInt64.self, r, key), to: T.self) }
        if T.self == UInt32.self { return unsafeBitCast(try unwrapInteger(UInt32.self, r, key), to: T.self) }
        if T.self == UInt16.self { return unsafeBitCast(try unwrapInteger(UInt16.self, r, key), to: T.self) }
        if T.self == UInt8.self { return unsafeBitCast(try unwrapInteger(UInt8.self, r, key), to: T.self) }
        preconditionFailure("\(T.self) is not a plist scalar type")
    }

    /// Decodes the top-level value.
    func decodeSelf<T: Decodable>(_ type: T.Type) throws -> T {
        if Self.isScalar(T.self) { return try decodeScalar(T.self, value, nil) }
        if let array = T.self as? any PlistDecodableArray.Type { return try Self.decodeArray(array, self) }
        return try T(from: self)
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let d: PlistCollection?
        do throws(PlistError) { d = try source.dict(value) } catch { throw corrupt(error, nil) }
        guard let d else {
            if source.isNull(value) {
                throw DecodingError.valueNotFound(KeyedDecodingContainer<Key>.self, .init(codingPath: codingPath, debugDescription: "Cannot get keyed decoding container -- found null value instead."))
            }
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath, debugDescription: "Expected to decode a dictionary but found \(source.describe(value)) instead."))
        }
        return KeyedDecodingContainer(_PlistKeyedDecodingContainer<Key>(decoder: self, dict: d))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let a = try arrayCollection()
        return _PlistUnkeyedDecodingContainer(decoder: self, array: a, count: a.count)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { source.isNull(value) }
    func decode(_ type: Bool.Type) throws -> Bool { try unwrapBool(value, nil) }
    func decode(_ type: String.Type) throws -> String { try unwrapString(value, nil) }
    func decode(_ type: Double.Type) throws -> Double { try unwrapDouble(value, nil) }
    func decode(_ type: Float.Type) throws -> Float { try unwrapFloat(value, nil) }
    func decode(_ type: Int.Type) throws -> Int { try unwrapInteger(Int.self, value, nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unwrapInteger(Int8.self, value, nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unwrapInteger(Int16.self, value, nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unwrapInteger(Int32.self, value, nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unwrapInteger(Int64.self, value, nil) }
    func decode(_ type: UInt.Type) throws -> UInt { try unwrapInteger(UInt.self, value, nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unwrapInteger(UInt8.self, value, nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unwrapInteger(UInt16.self, value, nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unwrapInteger(UInt32.self, value, nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unwrapInteger(UInt64.self, value, nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if Self.isScalar(T.self) { return try decodeScalar(T.self, value, nil) }
        return try T(from: self)
    }
}

struct _PlistKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: _PlistDecoderImpl
    let dict: PlistCollection

    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        guard let keys = try? decoder.source.keys(dict) else { return [] }
        return keys.compactMap { Key(stringValue: $0) }
    }

    @inline(__always)
    private func find(_ key: some CodingKey) throws(PlistError) -> Int? {
        try decoder.source.lookup(dict, key.stringValue, hint: &decoder.hint)
    }

    /// The value for `key`, or keyNotFound.
    @inline(__always)
    private func value(_ key: Key) throws -> Int {
        let r: Int?
        do throws(PlistError) { r = try find(key) } catch { throw decoder.corrupt(error, key) }
        guard let r else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return r
    }

    func contains(_ key: Key) -> Bool { ((try? find(key)) ?? nil) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.source.isNull(try value(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.unwrapBool(value(key), key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.unwrapString(value(key), key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.unwrapDouble(value(key), key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder.unwrapFloat(value(key), key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.unwrapInteger(Int.self, value(key), key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.unwrapInteger(Int8.self, value(key), key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.unwrapInteger(Int16.self, value(key), key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.unwrapInteger(Int32.self, value(key), key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.unwrapInteger(Int64.self, value(key), key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.unwrapInteger(UInt.self, value(key), key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.unwrapInteger(UInt8.self, value(key), key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.unwrapInteger(UInt16.self, value(key), key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.unwrapInteger(UInt32.self, value(key), key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder.unwrapInteger(UInt64.self, value(key), key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.decodeValue(T.self, value(key), key)
    }

    /// One lookup instead of the default's three (`contains`, `decodeNil`, `decode`).
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        let found: Int?
        do throws(PlistError) { found = try find(key) } catch { throw decoder.corrupt(error, key) }
        guard let r = found, !decoder.source.isNull(r) else { return nil }
        return try decoder.decodeValue(T.self, r, key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder.child(value(key), key).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.child(value(key), key).unkeyedContainer()
    }

    /// A decoder for the `"super"` entry; a missing entry reads as null, as in Foundation.
    func superDecoder() throws -> any Decoder { try superDecoder(PlistSuperKey()) }

    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder(key) }

    private func superDecoder(_ key: some CodingKey) throws -> any Decoder {
        let r: Int?
        do throws(PlistError) { r = try find(key) } catch { throw decoder.corrupt(error, key) }
        return try decoder.child(r ?? decoder.source.null, key)
    }
}

struct _PlistUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: _PlistDecoderImpl
    let array: PlistCollection
    let n: Int
    var currentIndex = 0

    init(decoder: _PlistDecoderImpl, array: PlistCollection, count: Int) {
        self.decoder = decoder
        self.array = array
        self.n = count
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { n }
    var isAtEnd: Bool { currentIndex >= n }

    /// The current element, or valueNotFound at the end.
    @inline(__always)
    private func current(_ type: Any.Type) throws -> Int {
        guard currentIndex < n else {
            throw DecodingError.valueNotFound(type, .init(codingPath: decoder.path(PlistIndexKey(currentIndex)), debugDescription: "Unkeyed container is at end."))
        }
        do throws(PlistError) {
            return try decoder.source.element(array, currentIndex)
        } catch {
            throw decoder.corrupt(error, PlistIndexKey(currentIndex))
        }
    }

    mutating func decodeNil() throws -> Bool {
        if decoder.source.isNull(try current(Never?.self)) {
            currentIndex += 1
            return true
        }
        return false
    }

    @inline(__always)
    private mutating func next<T>(_ type: T.Type, _ unwrap: (_PlistDecoderImpl, Int, any CodingKey) throws -> T) throws -> T {
        let v = try unwrap(decoder, try current(T.self), PlistIndexKey(currentIndex))
        currentIndex += 1
        return v
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(Bool.self) { try $0.unwrapBool($1, $2) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(String.self) { try $0.unwrapString($1, $2) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(Double.self) { try $0.unwrapDouble($1, $2) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(Float.self) { try $0.unwrapFloat($1, $2) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(Int.self) { try $0.unwrapInteger(Int.self, $1, $2) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(Int8.self) { try $0.unwrapInteger(Int8.self, $1, $2) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(Int16.self) { try $0.unwrapInteger(Int16.self, $1, $2) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(Int32.self) { try $0.unwrapInteger(Int32.self, $1, $2) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(Int64.self) { try $0.unwrapInteger(Int64.self, $1, $2) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(UInt.self) { try $0.unwrapInteger(UInt.self, $1, $2) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(UInt8.self) { try $0.unwrapInteger(UInt8.self, $1, $2) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(UInt16.self) { try $0.unwrapInteger(UInt16.self, $1, $2) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(UInt32.self) { try $0.unwrapInteger(UInt32.self, $1, $2) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(UInt64.self) { try $0.unwrapInteger(UInt64.self, $1, $2) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(T.self) { try $0.decodeValue(T.self, $1, $2) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try $0.child($1, $2).container(keyedBy: NestedKey.self) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try $0.child($1, $2).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { try $0.child($1, $2) }
    }
}

/// Arrays decode through this instead of `Array.init(from:)`: the same elements, paths and
/// errors, but into storage reserved up front rather than grown element by element.
protocol PlistDecodableArray {
    static func decodePlistArray(_ decoder: _PlistDecoderImpl) throws -> Self
}

extension Array: PlistDecodableArray where Element: Decodable {
    static func decodePlistArray(_ decoder: _PlistDecoderImpl) throws -> [Element] {
        let a = try decoder.arrayCollection()
        var result: [Element] = []
        result.reserveCapacity(a.count)
        for i in 0..<a.count {
            let key = PlistIndexKey(i)
            let r: Int
            do throws(PlistError) { r = try decoder.source.element(a, i) } catch { throw decoder.corrupt(error, key) }
            result.append(try decoder.decodeValue(Element.self, r, key))
        }
        return result
    }
}

/// A coder in a chain of nested coders: its key under its parent.
protocol CodingPathNode: AnyObject {
    var parent: Self? { get }
    var key: (any CodingKey)? { get }
}

/// Coding paths of nested coders, shared by the encoder and the decoder.
enum CodingPath {
    /// The keys from the top-level coder down to `node`.
    static func of<Node: CodingPathNode>(_ node: Node) -> [any CodingKey] {
        var path: [any CodingKey] = []
        var at: Node? = node
        while let n = at, let k = n.key {
            path.append(k)
            at = n.parent
        }
        return path.reversed()
    }
}
