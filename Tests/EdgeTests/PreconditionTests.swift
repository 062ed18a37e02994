import Testing

@testable import FolioEdge

/// Conditional requests (RFC 9110 §13): entity-tag lists, the precondition order, If-Range.
@Suite("Preconditions")
struct PreconditionTests {
    static let etag = "\"abc\""
    static let lastModified: Int64 = 1_700_000_000
    /// `lastModified` as an IMF-fixdate, and its neighbours (literals, so the tests do not lean on HTTPDate.format).
    static let atLastModified: HeaderValue = "Tue, 14 Nov 2023 22:13:20 GMT"
    static let secondBefore: HeaderValue = "Tue, 14 Nov 2023 22:13:19 GMT"
    static let secondAfter: HeaderValue = "Tue, 14 Nov 2023 22:13:21 GMT"
    static let longBefore: HeaderValue = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let farFuture: HeaderValue = "Fri, 01 Jan 2100 00:00:00 GMT"

    func evaluate(_ c: Conditions, isGetOrHead: Bool = true) -> PreconditionOutcome {
        Preconditions.evaluate(c, isGetOrHead: isGetOrHead, etag: Self.etag, lastModified: Self.lastModified)
    }

    func rangeApplies(_ ifRange: HeaderValue?) -> Bool {
        Preconditions.rangeApplies(Conditions(ifRange: ifRange), etag: Self.etag, lastModified: Self.lastModified)
    }

    @Test func datesUsedHereAreRight() {
        #expect(HTTPDate.parse(Self.atLastModified) == Self.lastModified)
        #expect(HTTPDate.parse(Self.secondBefore) == Self.lastModified - 1)
        #expect(HTTPDate.parse(Self.secondAfter) == Self.lastModified + 1)
    }

    @Test func noConditionsProceed() {
        #expect(evaluate(Conditions()) == .proceed)
        #expect(evaluate(Conditions(), isGetOrHead: false) == .proceed)
        // Range alone is not a precondition.
        #expect(evaluate(Conditions(range: "bytes=0-1")) == .proceed)
    }

    // MARK: If-Match (step 1)

    @Test func ifMatchMismatchFailsEvenWhenIfNoneMatchWouldMatch() {
        #expect(evaluate(Conditions(ifMatch: "\"x\"")) == .failed)
        #expect(evaluate(Conditions(ifMatch: "\"x\"", ifNoneMatch: "\"abc\"")) == .failed)
        #expect(evaluate(Conditions(ifMatch: "\"x\"", ifModifiedSince: Self.farFuture)) == .failed)
    }

    @Test func ifMatchMatches() {
        #expect(evaluate(Conditions(ifMatch: "*")) == .proceed)
        #expect(evaluate(Conditions(ifMatch: "\"abc\"")) == .proceed)
        #expect(evaluate(Conditions(ifMatch: "\"x\", \"abc\"")) == .proceed)
        // Passing If-Match does not stop If-None-Match / If-Modified-Since from applying.
        #expect(evaluate(Conditions(ifMatch: "*", ifNoneMatch: "\"abc\"")) == .notModified)
        #expect(evaluate(Conditions(ifMatch: "\"abc\"", ifModifiedSince: Self.farFuture)) == .notModified)
    }

    @Test func ifMatchUsesStrongComparison() {
        #expect(evaluate(Conditions(ifMatch: "W/\"abc\"")) == .failed)
        #expect(evaluate(Conditions(ifMatch: "W/\"abc\", \"x\"")) == .failed)
    }

    // MARK: If-Unmodified-Since (step 2)

    @Test func ifUnmodifiedSince() {
        #expect(evaluate(Conditions(ifUnmodifiedSince: Self.secondBefore)) == .failed)
        #expect(evaluate(Conditions(ifUnmodifiedSince: Self.longBefore)) == .failed)
        #expect(evaluate(Conditions(ifUnmodifiedSince: Self.secondBefore), isGetOrHead: false) == .failed)
        #expect(evaluate(Conditions(ifUnmodifiedSince: Self.atLastModified)) == .proceed)
        #expect(evaluate(Conditions(ifUnmodifiedSince: Self.secondAfter)) == .proceed)
    }

    @Test func ifUnmodifiedSinceIgnoredWhenIfMatchPresent() {
        #expect(evaluate(Conditions(ifMatch: "\"abc\"", ifUnmodifiedSince: Self.secondBefore)) == .proceed)
        #expect(evaluate(Conditions(ifMatch: "*", ifUnmodifiedSince: Self.longBefore)) == .proceed)
    }

    @Test func ifUnmodifiedSincePassingThenIfNoneMatch() {
        #expect(evaluate(Conditions(ifNoneMatch: "\"abc\"", ifUnmodifiedSince: Self.secondAfter)) == .notModified)
        // Failing IUS wins over a matching If-None-Match (step 2 before step 3).
        #expect(evaluate(Conditions(ifNoneMatch: "\"abc\"", ifUnmodifiedSince: Self.secondBefore)) == .failed)
    }

    // MARK: If-None-Match (step 3)

    @Test func ifNoneMatchMatches() {
        #expect(evaluate(Conditions(ifNoneMatch: "\"abc\"")) == .notModified)
        #expect(evaluate(Conditions(ifNoneMatch: "\"x\", \"abc\"")) == .notModified)
        #expect(evaluate(Conditions(ifNoneMatch: "W/\"abc\"")) == .notModified)
        #expect(evaluate(Conditions(ifNoneMatch: "*")) == .notModified)
    }

    @Test func ifNoneMatchOnOtherMethodsFails() {
        #expect(evaluate(Conditions(ifNoneMatch: "\"abc\""), isGetOrHead: false) == .failed)
        #expect(evaluate(Conditions(ifNoneMatch: "*"), isGetOrHead: false) == .failed)
        #expect(evaluate(Conditions(ifNoneMatch: "\"x\""), isGetOrHead: false) == .proceed)
    }

    @Test func ifNoneMatchMismatchProceeds() {
        #expect(evaluate(Conditions(ifNoneMatch: "\"x\"")) == .proceed)
        #expect(evaluate(Conditions(ifNoneMatch: "\"ab\", \"abcd\"")) == .proceed)
        #expect(evaluate(Conditions(ifNoneMatch: "")) == .proceed)
    }

    // MARK: If-Modified-Since (step 4)

    @Test func ifModifiedSince() {
        #expect(evaluate(Conditions(ifModifiedSince: Self.atLastModified)) == .notModified)
        #expect(evaluate(Conditions(ifModifiedSince: Self.secondAfter)) == .notModified)
        #expect(evaluate(Conditions(ifModifiedSince: Self.farFuture)) == .notModified)
        #expect(evaluate(Conditions(ifModifiedSince: Self.secondBefore)) == .proceed)
        #expect(evaluate(Conditions(ifModifiedSince: Self.longBefore)) == .proceed)
    }

    @Test func ifModifiedSinceOnlyForGetAndHead() {
        #expect(evaluate(Conditions(ifModifiedSince: Self.farFuture), isGetOrHead: false) == .proceed)
    }

    @Test func ifModifiedSinceIgnoredWhenIfNoneMatchPresent() {
        #expect(evaluate(Conditions(ifNoneMatch: "\"x\"", ifModifiedSince: Self.farFuture)) == .proceed)
        #expect(evaluate(Conditions(ifNoneMatch: "\"x\"", ifModifiedSince: Self.atLastModified)) == .proceed)
    }

    @Test func invalidDatesAreIgnored() {
        #expect(evaluate(Conditions(ifUnmodifiedSince: "yesterday")) == .proceed)
        #expect(evaluate(Conditions(ifUnmodifiedSince: "Sunday, 06-Nov-94 08:49:37 GMT")) == .proceed)
        #expect(evaluate(Conditions(ifUnmodifiedSince: "")) == .proceed)
        #expect(evaluate(Conditions(ifModifiedSince: "garbage")) == .proceed)
        // A far-future date in asctime / RFC 850 form would give 304 if it were parsed.
        #expect(evaluate(Conditions(ifModifiedSince: "Fri Jan  1 00:00:00 2100")) == .proceed)
        #expect(evaluate(Conditions(ifModifiedSince: "Friday, 01-Jan-00 00:00:00 GMT")) == .proceed)
        // An unparseable IUS does not hide a later If-None-Match match.
        #expect(evaluate(Conditions(ifNoneMatch: "\"abc\"", ifUnmodifiedSince: "nonsense")) == .notModified)
    }

    // MARK: If-Range

    @Test func rangeAppliesWithoutIfRange() {
        #expect(rangeApplies(nil))
    }

    @Test func ifRangeWithEntityTag() {
        #expect(rangeApplies("\"abc\""))
        #expect(rangeApplies("  \"abc\"  "))
        #expect(!rangeApplies("W/\"abc\""))
        #expect(!rangeApplies("\"x\""))
        #expect(!rangeApplies("\"abcd\""))
        #expect(!rangeApplies("\"abc"))
    }

    @Test func ifRangeWithDate() {
        #expect(rangeApplies(Self.atLastModified))
        #expect(rangeApplies(HeaderValue(" \(Self.atLastModified) ")))
        #expect(!rangeApplies(Self.secondBefore))
        #expect(!rangeApplies(Self.secondAfter))
        #expect(!rangeApplies(Self.farFuture))
    }

    @Test func ifRangeGarbage() {
        #expect(!rangeApplies("garbage"))
        #expect(!rangeApplies(""))
        #expect(!rangeApplies("*"))
        #expect(!rangeApplies("Tuesday, 14-Nov-23 22:13:20 GMT"))
    }
}

/// `If-Match` / `If-None-Match` member lists, compared as bytes.
@Suite("Entity-tag lists")
struct EntityTagListTests {
    static let etag = "\"abc\""

    func weak(_ list: HeaderValue, _ etag: String = etag) -> Bool { EntityTagList.parse(list).matchesWeakly(etag) }
    func strong(_ list: HeaderValue, _ etag: String = etag) -> Bool { EntityTagList.parse(list).matchesStrongly(etag) }

    @Test func singleTags() {
        #expect(weak("\"abc\""))
        #expect(strong("\"abc\""))
        #expect(!weak("\"ab\""))
        #expect(!weak("\"abcd\""))
        #expect(!weak("\"ABC\""))
        #expect(!strong("\"x\""))
        #expect(!weak(""))
        #expect(!strong(""))
    }

    @Test func weakTags() {
        #expect(weak("W/\"abc\""))
        #expect(!strong("W/\"abc\""))
        // The weak prefix is case-sensitive and takes no space.
        #expect(!weak("w/\"abc\""))
        #expect(!weak("W/ \"abc\""))
    }

    @Test func listsWithSpacesAndCommas() {
        #expect(weak("\"x\",\"abc\""))
        #expect(weak("\"x\", \"abc\""))
        #expect(weak("  \"x\" ,\t \"abc\"  "))
        #expect(weak(",, \"abc\" ,,"))
        #expect(weak("\"x\", W/\"y\", W/\"abc\""))
        #expect(strong("W/\"abc\", \"abc\""))
        #expect(!strong("\"x\", W/\"abc\""))
        #expect(!weak("\"x\", \"y\", \"z\""))
        #expect(!weak(" , , "))
    }

    @Test func malformedMembersEndTheList() {
        #expect(!weak("\"abc"))
        #expect(!weak("abc"))
        #expect(!weak("\"x\", \"abc"))
        #expect(!weak("\"x\", abc, \"abc\""))
        #expect(!weak("\"x\", W/abc, \"abc\""))
        // Matching is lazy: a hit before the malformed member counts.
        #expect(weak("\"abc\", garbage"))
        #expect(weak("\"abc\", \"unterminated"))
    }

    @Test func star() {
        #expect(weak("*"))
        #expect(strong("*"))
        #expect(weak("  *  "))
        #expect(weak("\t*\t"))
        #expect(strong(" * "))
        #expect(weak("*", "\"anything-else\""))
        // "*" is only special on its own.
        #expect(!weak("*, \"x\""))
        #expect(!weak("**"))
        #expect(!weak("\"*\""))
    }

    @Test func emptyOpaqueTag() {
        #expect(weak("\"\"", "\"\""))
        #expect(!weak("\"\"", "\"abc\""))
        #expect(!weak("\"abc\"", "\"\""))
    }

    @Test func viewOfALargerBuffer() {
        // The parser hands out views into the read buffer: only the viewed bytes count.
        let whole = Array("If-None-Match: \"x\", \"abc\";".utf8)
        let start = "If-None-Match: ".utf8.count
        whole.withUnsafeBytes { raw in
            #expect(weak(HeaderValue(borrowing: UnsafeRawBufferPointer(rebasing: raw[start..<(raw.count - 1)]))))
            #expect(!weak(HeaderValue(borrowing: UnsafeRawBufferPointer(rebasing: raw[start..<(raw.count - 2)]))))
        }
    }
}
