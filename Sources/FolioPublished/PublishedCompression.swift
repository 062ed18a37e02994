/// How the builder compresses what it publishes, shared with an edge that rebuilds a deployed
/// version's variants itself: the same input at the same level gives the same gzip bytes on
/// every machine (``Gzip``'s chunking depends only on the input's size).
package enum PublishedCompression {
    /// The gzip level for an object or manifest of `size` bytes: 1 up to ``smallObject``, 9
    /// above it, and above 128 KB 6, about 3x faster than 9 for ~1% more bytes (libdeflate's 6
    /// is still smaller than zlib's 9).
    ///
    /// On a small object libdeflate's fixed costs (its tables, set up for every call) outweigh
    /// the search: level 9 took 31 µs for a 2.25 KB post and level 1 16 µs, for 0.4% more bytes
    /// (4 bytes a post, 10,000 generated posts) and 0.8% to 1.2% on `content/`'s small objects.
    package static func gzipLevel(_ size: Int) -> Int32 { size > 128 * 1024 ? 6 : (size > smallObject ? 9 : 1) }

    /// The largest object gzipped at level 1.
    package static let smallObject = 4 * 1024

    /// Objects larger than this get at most ``largeObjectBrotliQuality``: quality 11 runs at
    /// about 1 MB/s a core.
    package static let largeObject = 1 << 20
    package static let largeObjectBrotliQuality: Int32 = 5

    /// The brotli quality for an object of `size` bytes at the build's `quality`.
    package static func objectBrotliQuality(_ quality: Int32, size: Int) -> Int32 {
        size > largeObject ? min(quality, largeObjectBrotliQuality) : quality
    }

    /// The brotli quality of `manifest.plist.br` at the build's `quality`: past 256 KiB 1 (a
    /// 20,000-entry manifest in about 12 ms).
    package static func manifestBrotliQuality(_ quality: Int32, size: Int) -> Int32 { size > 256 * 1024 ? 1 : quality }
}
