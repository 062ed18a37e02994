/// A fast seeded hash of bytes for in-memory tables (interned strings, routes): eight bytes at
/// a time, multiply and xor-shift. Not cryptographic; a random seed per table keeps inputs from
/// being chosen to collide.
package enum WordHash {
    @inline(__always)
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var h = seed ^ UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
        var i = 0
        let n = bytes.count
        while i + 8 <= n {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 31
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < n {
            tail |= UInt64(bytes[i]) << shift
            shift += 8
            i += 1
        }
        h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 29)
    }
}
