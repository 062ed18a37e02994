import CFolioSystem

/// CRC-32 (libdeflate's, with carry-less multiply where the CPU has it): a checksum against
/// torn or damaged files, not against anyone.
package enum CRC32 {
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        libdeflate_crc32(crc, bytes.baseAddress, bytes.count)
    }
}
