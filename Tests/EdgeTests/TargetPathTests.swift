import Testing

@testable import FolioEdge

/// `EdgeHandler.path(of:)`: the decoded path of an origin-form request target.
@Suite("Request target path")
struct TargetPathTests {
    @Test(arguments: [
        ("/", "/"),
        ("/a/b", "/a/b"),
        ("/a/b?x=1", "/a/b"),
        ("/?x", "/"),
        ("/a#f", "/a"),
        ("/a?b#c", "/a"),
        ("/a%2Fb", "/a/b"),
        ("/a%2fb", "/a/b"),
        ("/%41%42c", "/ABc"),
        ("/%E2%80%99", "/’"),
        ("/caf%C3%A9", "/café"),
        ("/a%3Fb?x", "/a?b"),  // an encoded "?" is part of the path
        ("/a%23b", "/a#b"),
        ("/a%20b", "/a b"),
        ("/a?x=%zz", "/a"),  // the query is not decoded
        ("/a#%", "/a"),
        ("http://example.com/a", "/a"),  // absolute form (RFC 9112 §3.2.2)
        ("HTTP://example.com/a/b?q", "/a/b"),
        ("http://example.com", "/"),
        ("http://example.com?q", "/"),
    ] as [(String, String)])
    func decodes(_ target: String, _ path: String) {
        #expect(EdgeHandler.path(of: target) == path)
    }

    @Test(arguments: [
        "/%zz",  // not hex
        "/%4",  // truncated escape
        "/%",
        "/a%4?x=1",  // truncated right before the query
        "/%g1",
        "/%1g",
        "/%FF",  // not UTF-8
        "/%C3",  // truncated UTF-8 sequence
        "/%C3%28",
        "/%ED%A0%80",  // an encoded surrogate
        "x",  // not origin form
        "",
        "*",
        "?x",
    ])
    func refuses(_ target: String) {
        #expect(EdgeHandler.path(of: target) == nil)
    }
}
