/// How the builder compresses what it publishes, shared with an edge that rebuilds a deployed
/// version's variants itself: the same input at the same level gives the same gzip bytes on
/// every machine (``Gzip``'s chunking depends only on the input's size).
package enum PublishedCompression {
    /// The gzip level for an object or manifest of `size` bytes: 9 for the usual small ones;
    /// above 128 KB 6, about 3x faster for ~1% more bytes (libdeflate's 6 is still smaller
    /// than zlib's 9).
    package static func gzipLevel(_ size: Int) -> Int32 { size > 128 * 1024 ? 6 : 9 }

    /// The brotli quality of `manifest.plist.br` at the build's `quality`: past 256 KiB 1 (a
    /// 20,000-entry manifest in about 12 ms).
    package static func manifestBrotliQuality(_ quality: Int32, size: Int) -> Int32 { size > 256 * 1024 ? 1 : quality }
}
