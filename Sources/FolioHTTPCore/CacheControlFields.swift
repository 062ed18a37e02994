@_exported import FolioHTTPFields
import NIOHTTP1

extension CacheControl {
    /// The directives of every line of `name` in `headers`; nil when there is none.
    package init?(_ headers: HTTPHeaders, name: String = "cache-control") {
        self.init(lines: headers[name])
    }

    /// The `Age` value of `headers`: a non-negative integer (the first of several); nil when
    /// absent or invalid.
    package static func age(_ headers: HTTPHeaders) -> Int? { age(headers["age"].first) }
}
