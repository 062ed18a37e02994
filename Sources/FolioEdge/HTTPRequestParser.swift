// The request-head parser (`HTTPRequestParser`, `ParsedRequest`, `HeaderValue`, `Conditions`,
// `HeaderText`) lives in the FolioHTTPCore library, where the fuzz targets can reach it; it is
// `@inlinable`, so the edge compiles it into its own hot path. Re-exported for the edge's tests.
@_exported import FolioHTTPCore
