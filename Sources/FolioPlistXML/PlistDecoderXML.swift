import FolioPlist

extension PlistDecoder {
    /// Decodes a value of `type` from property list bytes in any of the three formats: XML through
    /// ``XMLPlist/decode(_:)``, binary and JSON as `decode(_:from:)` reads them. A malformed
    /// property list is `DecodingError.dataCorrupted`, as in every format.
    public func decode<T: Decodable>(_ type: T.Type, fromAnyFormat bytes: [UInt8]) throws -> T {
        guard PlistFormat.sniff(bytes) == .xml else { return try decode(type, from: bytes) }
        return try decode(type) { () throws(PlistError) in try XMLPlist.decode(bytes) }
    }
}
