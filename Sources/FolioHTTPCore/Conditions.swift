/// The request headers that make a GET or HEAD conditional.
package struct Conditions: Equatable, Sendable {
    package var ifMatch: HeaderValue?
    package var ifNoneMatch: HeaderValue?
    package var ifModifiedSince: HeaderValue?
    package var ifUnmodifiedSince: HeaderValue?
    package var ifRange: HeaderValue?
    package var range: HeaderValue?

    /// Conditions from these header values (nil: the header is absent).
    @inlinable
    package init(
        ifMatch: HeaderValue? = nil, ifNoneMatch: HeaderValue? = nil, ifModifiedSince: HeaderValue? = nil,
        ifUnmodifiedSince: HeaderValue? = nil, ifRange: HeaderValue? = nil, range: HeaderValue? = nil
    ) {
        self.ifMatch = ifMatch
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.ifUnmodifiedSince = ifUnmodifiedSince
        self.ifRange = ifRange
        self.range = range
    }

    /// The same with every view copied (see `HeaderValue`).
    @inlinable
    package func owned() -> Conditions {
        Conditions(
            ifMatch: ifMatch?.owned(), ifNoneMatch: ifNoneMatch?.owned(), ifModifiedSince: ifModifiedSince?.owned(),
            ifUnmodifiedSince: ifUnmodifiedSince?.owned(), ifRange: ifRange?.owned(), range: range?.owned())
    }
}
