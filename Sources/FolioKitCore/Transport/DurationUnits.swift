extension Duration {
    /// The duration in seconds (a timer's deadline, URLSession's intervals).
    package var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration in milliseconds, fractions kept (reports).
    package var inMilliseconds: Double { inSeconds * 1000 }

    /// The duration in whole milliseconds, rounded down (socket timeouts, messages).
    package var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
