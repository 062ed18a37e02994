import FolioBuilder
import FolioPlist
import Foundation
import Testing

/// What an app decodes from a published null: the reader's `"$null"`, encoded as the builder
/// encodes it, decodes as `nil` through FolioPlist's decoder (from bytes and from a value) and
/// through Foundation's `PropertyListDecoder`, for an optional property and for an optional in a
/// dictionary or an array.
@Suite("Published nulls decode as nil")
struct NullDecodingTests {
    struct Person: Decodable, Equatable {
        var name: String
        var middleName: String?
        var age: Int?
        var tags: [String?]
        var extra: [String: String?]

        enum CodingKeys: String, CodingKey {
            case name, age, tags, extra
            case middleName = "middle_name"
        }
    }

    static let source = #"{"name": "Ada", "middle_name": null, "age": null, "tags": ["a", null], "extra": {"x": null, "y": "z"}}"#
    static let expected = Person(name: "Ada", middleName: nil, age: nil, tags: ["a", nil], extra: ["x": nil, "y": "z"])

    /// The published bytes of `source`: the reader's value in binary plist form.
    static func published(_ text: String, _ format: DataFormat) throws -> [UInt8] {
        BinaryPlist.encode(try StructuredReader.read(Array(text.utf8), format: format))
    }

    @Test("FolioPlist's decoder, from the published bytes and from the value")
    func folioPlist() throws {
        let bytes = try Self.published(Self.source, .json)
        let decoded = try PlistDecoder().decode(Person.self, from: bytes)
        #expect(decoded == Self.expected)
        #expect(decoded.extra.keys.sorted() == ["x", "y"] && decoded.extra["x"] == .some(nil), "the null key is there, its value nil")
        #expect(try PlistDecoder().decode(Person.self, from: BinaryPlist.decode(bytes)) == Self.expected)
    }

    @Test("Foundation's PropertyListDecoder, from the same bytes")
    func foundation() throws {
        let bytes = try Self.published(Self.source, .json)
        let decoded = try PropertyListDecoder().decode(Person.self, from: Data(bytes))
        #expect(decoded == Self.expected)
        #expect(decoded.extra.keys.sorted() == ["x", "y"] && decoded.extra["x"] == .some(nil), "the null key is there, its value nil")
    }

    @Test("a YAML workflow's `on:` with null triggers: the keys are there, their values nil")
    func workflowTriggers() throws {
        struct Trigger: Decodable, Equatable { var branches: [String]? }
        struct Workflow: Decodable, Equatable { var on: [String: Trigger?] }
        let bytes = try Self.published("on:\n  workflow_call:\n  push:\n    branches: [main]\n", .yaml)
        let want = Workflow(on: ["workflow_call": nil, "push": Trigger(branches: ["main"])])
        #expect(try PlistDecoder().decode(Workflow.self, from: bytes) == want)
        #expect(try PropertyListDecoder().decode(Workflow.self, from: Data(bytes)) == want)
    }

    @Test("a null where a non-optional is declared fails to decode, in both decoders")
    func nonOptionalRefuses() throws {
        struct Strict: Decodable { var name: String }
        let bytes = try Self.published(#"{"name": null}"#, .json)
        #expect(throws: DecodingError.self) { try PlistDecoder().decode(Strict.self, from: bytes) }
        #expect(throws: DecodingError.self) { try PropertyListDecoder().decode(Strict.self, from: Data(bytes)) }
    }
}
