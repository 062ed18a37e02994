import CFolioSystem

/// An error from libbrotli while compressing or decompressing.
package struct BrotliError: Error, CustomStringConvertible, Sendable {
    package var description: String
}

/// brotli (RFC 7932), by Google's libbrotli: one-shot compression, streaming decompression with a
/// size limit. The output is deterministic for a given quality, window and library version.
package enum Brotli {
    /// Compresses `input` at `quality` (0...11), with the smallest window (10...24 bits) that holds
    /// the whole input, so a small input does not pay for a 4 MiB window. Below
    /// ``plainLiteralsBelow`` bytes, qualities 10 and 11 go without literal context modeling.
    package static func compress(_ input: [UInt8], quality: Int32) throws(BrotliError) -> [UInt8] {
        guard (0...11).contains(quality) else { throw BrotliError(description: "brotli: quality \(quality) is not in 0...11") }
        let bound = BrotliEncoderMaxCompressedSize(input.count)
        guard bound > 0 else { throw BrotliError(description: "brotli: \(input.count) bytes is too large to compress") }
        var output = [UInt8](repeating: 0, count: bound)
        let plainLiterals = quality >= 10 && !input.isEmpty && input.count < plainLiteralsBelow
        let size = input.withUnsafeBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                plainLiterals ? withoutLiteralContexts(inBuf, outBuf, quality: quality) : oneShot(inBuf, outBuf, quality: quality)
            }
        }
        guard let size else { throw BrotliError(description: "brotli: the encoder failed (out of memory?)") }
        output.removeSubrange(size...)
        return output
    }

    /// libbrotlienc's one-shot encoder: the size written to `output`, or nil.
    private static func oneShot(_ input: UnsafeBufferPointer<UInt8>, _ output: UnsafeMutableBufferPointer<UInt8>, quality: Int32) -> Int? {
        var size = output.count
        let ok = BrotliEncoderCompress(
            quality, window(for: input.count), BROTLI_MODE_GENERIC, input.count, input.baseAddress, &size, output.baseAddress)
        return ok == BROTLI_TRUE ? size : nil
    }

    /// The streaming encoder with `BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING`, in one call
    /// (`output` holds the worst case): the size written, or nil.
    private static func withoutLiteralContexts(
        _ input: UnsafeBufferPointer<UInt8>, _ output: UnsafeMutableBufferPointer<UInt8>, quality: Int32
    ) -> Int? {
        guard let encoder = BrotliEncoderCreateInstance(nil, nil, nil) else { return nil }
        defer { BrotliEncoderDestroyInstance(encoder) }
        let parameters = [
            (BROTLI_PARAM_QUALITY, UInt32(quality)), (BROTLI_PARAM_LGWIN, UInt32(window(for: input.count))),
            (BROTLI_PARAM_SIZE_HINT, UInt32(input.count)), (BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING, 1),
        ]
        for (parameter, value) in parameters where BrotliEncoderSetParameter(encoder, parameter, value) != BROTLI_TRUE { return nil }
        var (availableIn, nextIn) = (input.count, input.baseAddress)
        var (availableOut, nextOut) = (output.count, output.baseAddress)
        let ok = BrotliEncoderCompressStream(encoder, BROTLI_OPERATION_FINISH, &availableIn, &nextIn, &availableOut, &nextOut, nil)
        guard ok == BROTLI_TRUE, BrotliEncoderIsFinished(encoder) == BROTLI_TRUE else { return nil }
        return output.count - availableOut
    }

    /// Below this many bytes, qualities 10 and 11 compress without literal context modeling
    /// (`BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING`): on small objects the modeling takes about
    /// a third of quality 11's time, and leaving it out changes the bytes by -1.5% (content-bench's
    /// 2 KB posts) to +2.5% (some of `content/`'s 1-4 KiB objects; +0.9% on all its small ones);
    /// see Benchmarks/README, "brotli without literal context modeling".
    package static let plainLiteralsBelow = 16 << 10

    /// The window (log2 of its size) for an input of `count` bytes.
    static func window(for count: Int) -> Int32 {
        var bits: Int32 = 10  // BROTLI_MIN_WINDOW_BITS
        while bits < 24, (1 << bits) - 16 < count { bits += 1 }  // the window holds 2^bits - 16 bytes
        return bits
    }

    /// Decompresses one brotli stream, refusing output larger than `maxSize` bytes, a truncated
    /// stream and bytes after its end.
    package static func decompress(_ input: [UInt8], maxSize: Int) throws(BrotliError) -> [UInt8] {
        guard let decoder = BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw BrotliError(description: "brotli: cannot allocate a decoder (out of memory)")
        }
        defer { BrotliDecoderDestroyInstance(decoder) }
        var output = [UInt8]()
        // One byte past the limit is enough to see it crossed; chunks of at most 1 MiB.
        let past = maxSize < Int.max ? maxSize + 1 : maxSize
        var chunk = [UInt8](repeating: 0, count: max(1, min(max(input.count * 4, 4096), 1 << 20, past)))
        var result = BROTLI_DECODER_RESULT_ERROR
        var leftover = 0
        input.withUnsafeBufferPointer { inBuf in
            var availIn = inBuf.count
            var nextIn = inBuf.baseAddress
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { c in
                    var availOut = c.count
                    var nextOut = c.baseAddress
                    result = BrotliDecoderDecompressStream(decoder, &availIn, &nextIn, &availOut, &nextOut, nil)
                    return c.count - availOut
                }
                output.append(contentsOf: chunk[0..<produced])
            } while result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT && output.count <= maxSize
            leftover = availIn
        }
        if output.count > maxSize { throw BrotliError(description: "brotli: output exceeds \(maxSize) bytes") }
        switch result {
        case BROTLI_DECODER_RESULT_SUCCESS where leftover == 0: return output
        case BROTLI_DECODER_RESULT_SUCCESS: throw BrotliError(description: "brotli: trailing bytes after the brotli stream")
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: throw BrotliError(description: "brotli: stream is truncated")
        default:
            let code = BrotliDecoderGetErrorCode(decoder)
            let name = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "\(code.rawValue)"
            throw BrotliError(description: "brotli: corrupt stream (\(name))")
        }
    }
}
