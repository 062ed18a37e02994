/// UTF-8 validation that says where the first bad byte is.
package enum UTF8Validation {
    /// The offset of the first byte that is not part of well-formed UTF-8, or nil if all is well.
    package static func firstInvalidOffset(_ bytes: [UInt8]) -> Int? { firstInvalid(bytes) }

    /// The same for a slice, the offset counted from the slice's start.
    package static func firstInvalidOffset(_ bytes: ArraySlice<UInt8>) -> Int? { firstInvalid(bytes) }

    /// Specialised in this module for both callers above (a generic called from another module
    /// would not be).
    private static func firstInvalid<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Int? where Bytes.Index == Int {
        let start = bytes.startIndex
        var i = start
        let n = bytes.endIndex
        while i < n {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let len: Int
            var lo: UInt8 = 0x80
            var hi: UInt8 = 0xBF
            switch b {
            case 0xC2...0xDF: len = 2
            case 0xE0: len = 3; lo = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: len = 3
            case 0xED: len = 3; hi = 0x9F
            case 0xF0: len = 4; lo = 0x90
            case 0xF1...0xF3: len = 4
            case 0xF4: len = 4; hi = 0x8F
            default: return i - start
            }
            guard i + len <= n else { return i - start }
            let b1 = bytes[i + 1]
            guard b1 >= lo, b1 <= hi else { return i - start }
            for k in 2..<len where bytes[i + k] & 0xC0 != 0x80 { return i - start }
            i += len
        }
        return nil
    }

    /// The 1-based line and column (in characters) of byte offset `offset`.
    package static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for b in bytes[0..<min(offset, bytes.count)] {
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
