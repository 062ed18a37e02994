import FolioPlist
import FolioTestSupport
import Testing

/// `folio diff` across signing: unsigned → signed by a, then signed by b; content the same.
@Suite("folio diff: signing in words", .serialized)
struct ClientDiffSigningTests {
    struct Versions {
        let root: ClientRoot
        let keys: SigningKeys

        static func make() throws -> Versions {
            let root = try ClientRoot.make("diff-signing")
            let keys = try SigningKeys.make(in: root.dir, ["root", "a", "b"])
            let list = try keys.authorize(["a", "b"], version: 1)
            try root.publish(seed: nil, keys.buildArgs(["a"], keyList: list))
            try root.publish(seed: nil, keys.buildArgs(["b"], keyList: list))
            return Versions(root: root, keys: keys)
        }

        func diff(_ from: Int, _ to: Int, _ format: String) throws -> Harness.Output {
            let m = root.root + "/manifests/"
            return try ClientTest.folio(
                ["diff", m + "\(from).plist", m + "\(to).plist", "--format", format], cache: root.dir + "/cache", edge: ClientTest.unreachableEdge)
        }

        func id(_ name: String) throws -> String { try keys.secret(name).keyID }
    }

    @Test("unsigned → signed: 'now signed by key … (root …)' in text and markdown, typed in JSON")
    func nowSigned() throws {
        let v = try Versions.make()
        defer { v.root.cleanup() }
        let (a, b, root) = (try v.id("a"), try v.id("b"), try v.id("root"))
        let words = "now signed by key \(a) (root \(root))"
        for format in ["text", "markdown"] {
            let out = try v.diff(1, 2, format)
            #expect(out.status == 0, "same content: \(out.stdout) \(out.stderr)")
            #expect(out.stdout.contains(words), "\(out.stdout)")
            #expect(!out.stdout.contains("{") && !out.stdout.contains("keys}"), "no counts in braces: \(out.stdout)")
        }
        let json = try v.diff(1, 2, "json")
        let signing = try DiffJSONReader.value(json)["signing"]
        #expect(signing?["changes"] == .array([.string(words)]), "\(json.stdout)")
        #expect(signing?["old"] == DiffJSONReader.null)
        #expect(signing?["new"]?["signedBy"] == .array([.string(a)]), "\(json.stdout)")
        #expect(signing?["new"]?["keyList"]?["keys"] == .array([.string(a), .string(b)]), "\(json.stdout)")
        #expect(signing?["new"]?["keyList"]?["threshold"] == .int(1) && signing?["new"]?["keyList"]?["root"] == .string(root))
        #expect(Self.prettyLines(json.stdout), "\(json.stdout)")
        // Each format as a golden, paths and key ids named.
        let names = [(v.root.root, "<published>"), (a, "<key a>"), (b, "<key b>"), (root, "<root key>")]
        for (format, ext) in [("text", "text"), ("markdown", "md"), ("json", "json")] {
            try GoldenTests.check("diff-signing.\(ext)", GoldenTests.normalize(try v.diff(1, 2, format).stdout, names))
        }
    }

    @Test("signed by a → signed by b: 'signed by another key: key a → key b'")
    func anotherSigner() throws {
        let v = try Versions.make()
        defer { v.root.cleanup() }
        let (a, b) = (try v.id("a"), try v.id("b"))
        let words = "signed by another key: key \(a) → key \(b)"
        let text = try v.diff(2, 3, "text")
        #expect(text.status == 0 && text.stdout.contains("! signing: " + words), "\(text.stdout) \(text.stderr)")
        #expect(!text.stdout.contains("{"), "\(text.stdout)")
        let json = try DiffJSONReader.value(try v.diff(2, 3, "json"))
        #expect(json["signing"]?["changes"] == .array([.string(words)]), "\(json)")
        #expect(json["signing"]?["old"]?["signedBy"] == .array([.string(a)]))
        #expect(json["result"] == .string("same"))
    }

    /// Every line of pretty JSON holds a key or value: no line of a lone comma, no blank line.
    static func prettyLines(_ text: String) -> Bool {
        text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().allSatisfy { line in
            let t = line.trimmingCharacters(in: .whitespaces)
            return !t.isEmpty && t != ","
        }
    }
}
