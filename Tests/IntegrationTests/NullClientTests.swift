import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import Foundation
import Testing

/// `folio show`, `folio plist print` and `folio diff` over a published null (the string `"$null"`):
/// each prints `null`, never `"$null"`.
@Suite("folio show, plist print and diff print a published null as null", .serialized)
struct NullClientTests {
    static let v1 = #"{"name": "Ada", "middle_name": "Ann", "tags": ["a"]}"#
    static let v2 = #"{"name": "Ada", "middle_name": null, "tags": ["a", null]}"#

    /// Publishes `json` as `people.json` into `dir/public`; the object file of `people.plist`.
    static func publish(_ json: String, _ dir: String) throws -> String {
        try FileIO.makeDirectory(dir + "/content")
        try FileIO.writeAtomically(Array(json.utf8), to: dir + "/content/people.json", sync: false)
        let r = try Harness.run(
            Harness.binary("folio-build"), ["-q", "--content", dir + "/content", "--output", dir + "/public"], env: ClientTest.buildEnv)
        try #require(r.status == 0, "\(r.stderr)")
        let entry = try #require(try Harness.verifyPublished(dir + "/public").entry("people.plist"))
        return dir + "/public/" + entry.objectPath
    }

    static func folio(_ args: [String], _ dir: String) throws -> Harness.Output {
        try ClientTest.folio(args, cache: dir + "/cache", edge: ClientTest.unreachableEdge)
    }

    @Test("show --json, show and plist print --json of a published object")
    func show() throws {
        let dir = Harness.tempDir("null-show")
        defer { Harness.cleanup(dir) }
        let object = try Self.publish(Self.v2, dir)
        let json = try Self.folio(["show", object, "--json"], dir)
        #expect(json.stdout == "{\n  \"middle_name\": null,\n  \"name\": \"Ada\",\n  \"tags\": [\n    \"a\",\n    null\n  ]\n}\n", "\(json.stdout)\(json.stderr)")
        #expect(try Self.folio(["plist", "print", object, "--json"], dir).stdout == json.stdout)
        let text = try Self.folio(["show", object], dir)
        #expect(text.stdout.contains("\"middle_name\" => null\n") && text.stdout.contains("1 => null\n"), "\(text.stdout)")
        // The bytes hold Foundation's "$null", which a conversion to a JSON plist keeps (it reads back the same).
        #expect(try BinaryPlist.decode(try FileIO.read(object))["middle_name"] == .string("$null"))
    }

    @Test("diff: a value that becomes null, and a null item added, in text, markdown and JSON")
    func diff() throws {
        let dir = Harness.tempDir("null-diff")
        defer { Harness.cleanup(dir) }
        _ = try Self.publish(Self.v1, dir)
        _ = try Self.publish(Self.v2, dir)
        let (old, new) = (dir + "/public/manifests/1.plist", dir + "/public/manifest.plist")
        let text = try Self.folio(["diff", old, new], dir)
        #expect(text.status == 1, "\(text.stderr)")
        #expect(text.stdout.contains("~ people.plist middle_name: \"Ann\" → null\n"), "\(text.stdout)")
        #expect(text.stdout.contains("+ people.plist tags[1]: null\n"), "\(text.stdout)")
        let md = try Self.folio(["diff", old, new, "--format", "markdown"], dir)
        #expect(md.stdout.contains("| ~ | `middle_name` | \"Ann\" | null |"), "\(md.stdout)")
        let json = try Self.folio(["diff", old, new, "--format", "json"], dir)
        let changed = try #require(try DiffJSONReader.value(json)["changed"]?.arrayValue?.first?["changes"]?.arrayValue)
        let middle = try #require(changed.first { $0["at"] == .string("middle_name") })
        #expect(middle["op"] == .string("change") && middle["old"] == .string("Ann") && middle["new"] == DiffJSONReader.null, "\(changed)")
        #expect(!json.stdout.contains("$null") && !text.stdout.contains("$null") && !md.stdout.contains("$null"))
    }
}
