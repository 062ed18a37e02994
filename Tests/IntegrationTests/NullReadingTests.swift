import FolioBuilder
import FolioPlist
import Foundation
import Testing

/// Nulls in JSON, YAML and front matter under each ``NullPolicy``: kept as `"$null"`, left out,
/// or refused, with the error's position and what to do.
@Suite("Null values in content sources")
struct NullReadingTests {
    static func read(_ text: String, _ format: DataFormat, _ nulls: NullPolicy = .keep) throws(ReadError) -> PlistValue {
        try StructuredReader.read(Array(text.utf8), format: format, nulls: nulls)
    }

    static func expectError(
        _ text: String, _ format: DataFormat, _ nulls: NullPolicy, at line: Int, _ column: Int, _ message: String,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        do {
            let value = try read(text, format, nulls)
            Issue.record("read \(value), expected an error", sourceLocation: sourceLocation)
        } catch {
            #expect(error.line == line && error.column == column, "position of \(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(message), "message of \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("kept: JSON null as \"$null\" in objects, arrays and at the root")
    func jsonKeeps() throws {
        let v = try Self.read(#"{"a": null, "b": [1, null], "c": {"d": null}, "e": "null"}"#, .json)
        #expect(v == .dict([
            "a": .string("$null"), "b": .array([.int(1), .string("$null")]), "c": .dict(["d": .string("$null")]), "e": .string("null"),
        ]))
        #expect(try Self.read("null", .json) == .string("$null"))
        #expect(try StructuredReader.read(Array(#"{"a": null}"#.utf8), format: .json)["a"]?.isNull == true, "keep is the default")
    }

    @Test("kept: every YAML null form (empty, ~, null, Null, NULL, !!null), in block and flow; quoted ones are strings")
    func yamlKeeps() throws {
        let v = try Self.read("""
            on: {workflow_call: , pull_request: }
            off: {workflow_call, pull_request}
            a:
            b: ~
            c: null
            d: Null
            e: NULL
            f: !!null ''
            g: [~, x]
            h:
              - null
            q: "null"
            s: '~'
            """, .yaml)
        let null = PlistValue.string("$null")
        #expect(v["on"] == .dict(["workflow_call": null, "pull_request": null]) && v["off"] == v["on"])
        for key in ["a", "b", "c", "d", "e", "f"] { #expect(v[key] == null, "\(key)") }
        #expect(v["g"] == .array([null, .string("x")]) && v["h"] == .array([null]))
        #expect(v["q"] == .string("null") && v["s"] == .string("~"))
        #expect(try Self.read("~\n", .yaml) == null)
    }

    @Test("omitted: null keys left out at any depth, in JSON and YAML; merge keys and duplicates as before")
    func omits() throws {
        let json = try Self.read(#"{"a": null, "b": {"c": null, "d": 1}, "e": [{"f": null}]}"#, .json, .omit)
        #expect(json == .dict(["b": .dict(["d": .int(1)]), "e": .array([.dict([:])])]))
        let yaml = try Self.read("on:\n  workflow_call:\n  push: {branches: [main]}\nvolumes:\n  db-data:\n", .yaml, .omit)
        #expect(yaml == .dict(["on": .dict(["push": .dict(["branches": .array([.string("main")])])]), "volumes": .dict([:])]))
        // A mapping's own null still overrides what a merge key brings in: the key is left out.
        let merged = try Self.read("base: &b {x: 1, y: 2, z: ~}\nitem:\n  <<: *b\n  x: ~\n", .yaml, .omit)
        #expect(merged["item"] == .dict(["y": .int(2)]), "\(merged)")
        Self.expectError(#"{"a": null,"# + "\n" + #" "a": 1}"#, .json, .omit, at: 2, 2, "the key \"a\" appears twice in one object")
    }

    @Test("omit: a null in an array, or the whole file, is an error at its line and column")
    func omitErrors() {
        Self.expectError("{\"tags\": [\"a\",\n  null]}", .json, .omit, at: 2, 3,
                         "null at /tags/1 is an item of an array, which nulls = \"omit\" cannot leave out; remove the item or give it a value")
        Self.expectError("tags:\n  - a\n  - ~\n", .yaml, .omit, at: 3, 5, "null at /tags/1 is an item of an array")
        Self.expectError("x: [1, [null]]\n", .yaml, .omit, at: 1, 9, "null at /x/1/0 is an item of an array")
        Self.expectError("null", .json, .omit, at: 1, 1, "the file's value is null, which nulls = \"omit\" cannot leave out")
    }

    @Test("error: every null refused at its position, naming the rule and what to do")
    func refuses() {
        let rule = "is refused by nulls = \"error\" in folio.toml; give a value or remove the key, or set nulls = \"keep\" for this file"
        Self.expectError("{\"items\": [1, 2, 3,\n  {\"subtitle\": null}]}", .json, .error, at: 2, 16, "null at /items/3/subtitle " + rule)
        Self.expectError("null", .json, .error, at: 1, 1, "null at the root is refused")
        Self.expectError("title: x\nitems:\n  - a\n  - ~\n", .yaml, .error, at: 4, 5, "null at /items/1 " + rule)
        Self.expectError("on:\n  workflow_call:\n  push:\n", .yaml, .error, at: 2, 17, "null at /on/workflow_call is refused")
        Self.expectError("title: x\nsubtitle:\nnext: 1\n", .yaml, .error, at: 2, 10, "null at /subtitle is refused")
    }

    @Test("a !!null tag on text that is not null is an error, like the other tags")
    func wrongNullTag() {
        Self.expectError("a: !!null nothing\n", .yaml, .keep, at: 1, 4, "\"nothing\" is not null as its tag !!null says; fix the value or remove the tag")
    }

    @Test("front matter: nulls by the policy; a null matter is an empty mapping")
    func frontMatter() throws {
        let text = Array("---\ntitle: Hello\nsubtitle:\n---\nBody\n".utf8)
        #expect(try FrontMatter.split(text).matter == ["title": .string("Hello"), "subtitle": .string("$null")])
        #expect(try FrontMatter.split(text, nulls: .omit).matter == ["title": .string("Hello")])
        do {
            _ = try FrontMatter.split(text, nulls: .error)
            Issue.record("no error")
        } catch {
            #expect(error.line == 3 && error.column == 10 && error.message.contains("null at /subtitle is refused"), "\(error)")
        }
        #expect(try FrontMatter.split(Array("---\n~\n---\nBody\n".utf8), nulls: .error).matter == [:])
    }

    @Test("the flat-YAML fast path leaves nulls to Yams, which reads them by the policy")
    func fastPathLeavesNulls() throws {
        #expect(SimpleYAML.mapping(Array("a: 1\nb:\n".utf8)) == nil)
        #expect(SimpleYAML.mapping(Array("a: 1\nb: [x, ~]\n".utf8)) == nil)
        #expect(try Self.read("a: 1\nb:\n", .yaml, .omit) == .dict(["a": .int(1)]))
    }
}
