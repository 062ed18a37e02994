import FolioBuilder
import FolioPlist
import FolioTestSupport
import Foundation
import Testing

// MARK: - Helpers

/// `json` read as the builder reads content and schema files: a null is `"$null"`.
private func plist(_ json: String) throws -> PlistValue {
    try StructuredReader.read(Array(json.utf8), format: .json)
}

private func compile(_ schema: String) throws -> JSONSchema {
    try JSONSchema(try plist(schema), source: "test.schema.json")
}

private func violations(_ schema: String, _ instance: String, limit: Int = 100) throws -> [SchemaViolation] {
    try compile(schema).validate(try plist(instance), limit: limit)
}

private func schemaError(_ schema: String) throws -> SchemaError? {
    let document = try plist(schema)
    do throws(SchemaError) {
        _ = try JSONSchema(document, source: "bad.json")
        return nil
    } catch {
        return error
    }
}

// MARK: - Keywords

@Suite("JSON Schema keywords")
struct JSONSchemaKeywordTests {
    @Test func booleanSchemas() throws {
        #expect(try violations("true", #"{"a":1}"#).isEmpty)
        let v = try violations("false", "1")
        #expect(v.count == 1)
        #expect(v.first?.pointer == "" && v.first?.keyword == "false")
        let nested = try violations(#"{"properties":{"a":false}}"#, #"{"a":1,"b":2}"#)
        #expect(nested.map(\.pointer) == ["/a"])
    }

    @Test func typeNamesWhatWasFound() throws {
        let v = try violations(#"{"properties":{"title":{"type":"string"}}}"#, #"{"title":42}"#)
        #expect(v == [SchemaViolation(pointer: "/title", keyword: "type", message: "expected a string, found an integer (42)")])
        #expect(v.first?.description == "/title: expected a string, found an integer (42) [type]")
        #expect(try violations(#"{"type":"integer"}"#, "1.0").isEmpty)
        #expect(try violations(#"{"type":"integer"}"#, "1.5").first?.message == "expected an integer, found a number (1.5)")
        #expect(try violations(#"{"type":"number"}"#, "true").first?.message == "expected a number, found a boolean (true)")
        #expect(try violations(#"{"type":"number"}"#, "18446744073709551615").isEmpty)
        let many = try violations(#"{"type":["string","integer"]}"#, #"{"a":1}"#)
        #expect(many.first?.message == "expected a string or an integer, found an object with 1 property")
        #expect(try violations(#"{"type":"array"}"#, #"[]"#).isEmpty)
        #expect(try violations(#"{"type":"object"}"#, #"[1]"#).first?.message == "expected an object, found an array of 1 item")
    }

    @Test("a null (published as \"$null\") is of type null, not string; string keywords pass it by")
    func nulls() throws {
        #expect(try violations(#"{"type":"null"}"#, "null").isEmpty)
        #expect(try violations(#"{"type":["string","null"]}"#, "null").isEmpty)
        #expect(try violations(#"{"type":["string","null"]}"#, #""x""#).isEmpty)
        let wrong = try violations(#"{"properties":{"middle":{"type":"string"}}}"#, #"{"middle":null}"#)
        #expect(wrong == [SchemaViolation(pointer: "/middle", keyword: "type", message: "expected a string, found null")])
        #expect(try violations(#"{"type":["string","null"]}"#, "1").first?.message == "expected a string or null, found an integer (1)")
        #expect(try violations(#"{"type":"null"}"#, #""x""#).first?.message == "expected null, found a string (\"x\")")
        #expect(try violations(#"{"type":["string","null"],"minLength":2,"pattern":"^a","format":"email"}"#, "null").isEmpty)
        #expect(try violations(#"{"enum":["a",null]}"#, "null").isEmpty)
        #expect(try violations(#"{"enum":["a"]}"#, "null").first?.message.contains("found null") == true)
        #expect(try violations(#"{"const":null}"#, #""null""#).count == 1)
        #expect(try violations(#"{"uniqueItems":true}"#, "[null, 1, null]").count == 1)
    }

    @Test func propertiesRequiredAdditional() throws {
        let schema = #"""
            {"type":"object","required":["title","date"],"properties":{"title":{"type":"string"},"tags":{"type":"array"}},
             "additionalProperties":false}
            """#
        let v = try violations(schema, #"{"tags":"x","titel":"Hi"}"#)
        #expect(v.map(\.keyword) == ["required", "required", "additionalProperties", "type"])
        #expect(v.map(\.pointer) == ["", "", "", "/tags"])
        #expect(v[0].message == "\"title\" is required; add it")
        #expect(v[1].message.contains("\"date\""))
        #expect(v[2].message.contains("\"titel\" is not allowed"))
        let typed = try violations(#"{"additionalProperties":{"type":"integer"},"properties":{"a":true}}"#, #"{"a":"s","b":"t"}"#)
        #expect(typed.map(\.pointer) == ["/b"] && typed.first?.keyword == "type")
    }

    @Test func patternProperties() throws {
        let schema = #"{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}"#
        #expect(try violations(schema, #"{"x-a":"s"}"#).isEmpty)
        #expect(try violations(schema, #"{"x-a":1}"#).map(\.pointer) == ["/x-a"])
        #expect(try violations(schema, #"{"y":1}"#).first?.message.contains("\"y\"") == true)
    }

    @Test func itemsAndPrefixItems() throws {
        let schema = #"{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}"#
        #expect(try violations(schema, #"["a",1,2]"#).isEmpty)
        let v = try violations(schema, #"[1,2,"x"]"#)
        #expect(v.map(\.pointer) == ["/0", "/2"])
        let extra = try violations(#"{"items":false,"prefixItems":[true]}"#, "[1,2]")
        #expect(extra.map(\.pointer) == [""] && extra.first?.message == "expected at most 1 item (items is false), found 2; remove the rest")
        let nested = try violations(#"{"properties":{"items":{"items":{"required":["title"]}}}}"#, #"{"items":[{"title":"a"},{}]}"#)
        #expect(nested.map(\.pointer) == ["/items/1"])
    }

    @Test func itemCountsAndUniqueness() throws {
        #expect(try violations(#"{"minItems":2}"#, "[1]").first?.message == "expected at least 2 items, found 1; add items")
        #expect(try violations(#"{"maxItems":1}"#, "[1,2]").first?.keyword == "maxItems")
        let u = try violations(#"{"uniqueItems":true}"#, #"[1,"a",1.0]"#)
        #expect(u.first?.message == "items 0 and 2 are equal; remove the duplicate")
        #expect(try violations(#"{"uniqueItems":true}"#, #"[1,true,"1",{"a":1},{"a":2}]"#).isEmpty)
        #expect(try violations(#"{"contains":{"type":"string"},"minContains":2}"#, #"["a",1]"#).first?.keyword == "contains")
    }

    @Test func enumAndConst() throws {
        let v = try violations(#"{"enum":["draft","published"]}"#, #""archived""#)
        #expect(v.first?.message == #"expected "draft" or "published", found "archived"; use one of the allowed values"#)
        let long = try violations(#"{"enum":[1,2,3,4,5,6,7,8,9,10,11,12]}"#, "0")
        #expect(long.first?.message.contains("(or 4 more)") == true)
        #expect(try violations(#"{"const":1}"#, "1.0").isEmpty)
        #expect(try violations(#"{"enum":[[1,{"a":2.0}]]}"#, #"[1.0,{"a":2}]"#).isEmpty)
        #expect(try violations(#"{"const":1}"#, "true").first?.message == "expected exactly 1, found true")
    }

    @Test func numericBounds() throws {
        #expect(try violations(#"{"minimum":5}"#, "3").first?.message == "expected a number at least 5, found 3")
        #expect(try violations(#"{"minimum":5}"#, "5").isEmpty)
        #expect(try violations(#"{"exclusiveMinimum":5}"#, "5").first?.keyword == "exclusiveMinimum")
        #expect(try violations(#"{"maximum":1.5}"#, "2").first?.keyword == "maximum")
        #expect(try violations(#"{"exclusiveMaximum":2}"#, "1.999").isEmpty)
        #expect(try violations(#"{"maximum":9007199254740992}"#, "9007199254740993").first?.keyword == "maximum")
        #expect(try violations(#"{"minimum":-1}"#, "18446744073709551615").isEmpty)
        #expect(try violations(#"{"minimum":5}"#, #""3""#).isEmpty)
        #expect(try violations(#"{"multipleOf":3}"#, "10").first?.keyword == "multipleOf")
    }

    @Test func lengthsCountCodePoints() throws {
        #expect(try violations(#"{"maxLength":1}"#, #""é""#).isEmpty)
        #expect(try violations(#"{"maxLength":1}"#, "\"e\u{301}\"").first?.message == "expected at most 1 character, found 2 (\"e\u{301}\")")
        #expect(try violations(#"{"minLength":2}"#, #""💩""#).first?.keyword == "minLength")
        #expect(try violations(#"{"minLength":2}"#, "12").isEmpty)
    }

    @Test func patterns() throws {
        #expect(try violations(#"{"pattern":"b+"}"#, #""abbc""#).isEmpty)
        let v = try violations(#"{"pattern":"^[a-z]+$"}"#, #""ABC""#)
        #expect(v.first?.message == #"expected a string matching /^[a-z]+$/, found "ABC""#)
        let bad = try schemaError(#"{"properties":{"a":{"pattern":"(unclosed"}}}"#)
        #expect(bad?.pointer == "/properties/a/pattern")
        #expect(bad?.description.hasPrefix("bad.json: schema /properties/a/pattern:") == true)
        let start = Date()
        let slow = try violations(#"{"pattern":"^(a+)+$"}"#, "\"" + String(repeating: "a", count: 40) + "b\"")
        #expect(slow.first?.keyword == "pattern")
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test func formats() throws {
        let dt = #"{"format":"date-time"}"#
        for ok in ["2024-05-01T12:00:00Z", "2024-02-29t23:59:59.123+05:30", "1998-12-31T23:59:60Z"] {
            #expect(try violations(dt, "\"\(ok)\"").isEmpty, "\(ok)")
        }
        for bad in ["2023-02-29T00:00:00Z", "2024-05-01", "2024-05-01T12:00:00", "2024-05-01 12:00:00Z", "1998-12-31T22:59:60Z"] {
            #expect(try violations(dt, "\"\(bad)\"").first?.keyword == "format", "\(bad)")
        }
        let uri = #"{"format":"uri"}"#
        #expect(try violations(uri, #""https://example.com/a?b=c#d""#).isEmpty)
        #expect(try violations(uri, #""urn:isbn:0451450523""#).isEmpty)
        for bad in ["/relative/path", "http://exa mple.com", "https://x.com/%zz", "1http://x"] {
            #expect(try violations(uri, "\"\(bad)\"").first?.message.contains("absolute URI") == true, "\(bad)")
        }
        let email = #"{"format":"email"}"#
        for ok in ["a@example.com", "first.last+tag@sub.example.org", "\\\"odd name\\\"@example.com", "x@[192.168.0.1]"] {
            #expect(try violations(email, "\"\(ok)\"").isEmpty, "\(ok)")
        }
        for bad in ["plain", "a@", "@b.com", "a..b@c.com", "a@-b.com", "a b@c.com"] {
            #expect(try violations(email, "\"\(bad)\"").first?.keyword == "format", "\(bad)")
        }
        #expect(try violations(#"{"format":"hostname"}"#, #""!!""#).isEmpty)
    }

    @Test func references() throws {
        let defs = ##"{"$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"n":{"$ref":"#/$defs/pos"}}}"##
        #expect(try violations(defs, #"{"n":0}"#).map(\.keyword) == ["minimum"])
        let old = ##"{"definitions":{"s":{"type":"string"}},"items":{"$ref":"#/definitions/s"}}"##
        #expect(try violations(old, #"["a",2]"#).map(\.pointer) == ["/1"])
        let tree = ##"{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}"##
        #expect(try violations(tree, #"{"name":"a","kids":[{"name":"b","kids":[{}]}]}"#).map(\.pointer) == ["/kids/0/kids/0"])
        #expect(try violations(##"{"properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}"##, ##"{"b":1}"##).map(\.pointer) == ["/b"])
        #expect(try violations(##"{"$defs":{"a~b/c":{"type":"string"}},"$ref":"#/$defs/a~0b~1c"}"##, "1").count == 1)
        #expect(try violations(##"{"$defs":{"a b":{"type":"string"}},"$ref":"#/$defs/a%20b"}"##, "1").count == 1)
        // Cycles that consume no input terminate.
        #expect(try violations(##"{"$ref":"#"}"##, "1").isEmpty)
        let loop = ##"{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"string"}]}},"$ref":"#/$defs/a"}"##
        #expect(try violations(loop, "1").count <= 1)
        #expect(try schemaError(##"{"$ref":"#/$defs/missing"}"##)?.pointer == "/$ref")
        #expect(try schemaError(##"{"$ref":"other.json#/a"}"##)?.message.contains("outside this document") == true)
        #expect(try schemaError(##"{"$ref":"#anchor"}"##) != nil)
    }

    @Test func exponentialReferencesStayCheap() throws {
        var defs: [String] = []
        for i in 0..<40 { defs.append(##""d\##(i)":{"allOf":[{"$ref":"#/$defs/d\##(i + 1)"},{"$ref":"#/$defs/d\##(i + 1)"}]}"##) }
        defs.append(#""d40":{"type":"string"}"#)
        let schema = ##"{"$defs":{\##(defs.joined(separator: ","))},"$ref":"#/$defs/d0"}"##
        let start = Date()
        #expect(try violations(schema, #""ok""#).isEmpty)
        #expect(try violations(schema, "1", limit: 5).count == 5)
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test func combinators() throws {
        #expect(try violations(#"{"allOf":[{"type":"integer"},{"minimum":3}]}"#, "1.5").map(\.keyword) == ["type", "minimum"])
        let any = try violations(#"{"anyOf":[{"type":"string"},{"type":"integer"}]}"#, "true")
        #expect(any.first?.keyword == "anyOf" && any.first?.message.contains("none of the 2") == true)
        #expect(try violations(#"{"oneOf":[{"type":"integer"},{"minimum":0}]}"#, "1").first?.message.contains("alternatives 0 and 1") == true)
        #expect(try violations(#"{"oneOf":[{"type":"integer"},{"minimum":0}]}"#, "0.5").isEmpty)
        #expect(try violations(#"{"not":{"type":"string"}}"#, #""s""#).first?.keyword == "not")
        #expect(try violations(#"{"if":{"minimum":10},"then":{"multipleOf":10},"else":{"maximum":5}}"#, "7").first?.keyword == "maximum")
    }

    @Test func propertyCounts() throws {
        #expect(try violations(#"{"minProperties":1}"#, "{}").first?.message == "expected at least 1 property, found 0")
        #expect(try violations(#"{"maxProperties":1}"#, #"{"a":1,"b":2}"#).first?.keyword == "maxProperties")
        #expect(try violations(#"{"dependentRequired":{"a":["b"]}}"#, #"{"a":1}"#).first?.message.contains("\"b\" is required when \"a\"") == true)
        #expect(try violations(#"{"propertyNames":{"pattern":"^[a-z]+$"}}"#, #"{"Bad":1}"#).first?.keyword == "propertyNames")
    }

    @Test func badKeywordValuesAreSchemaErrors() throws {
        let cases: [(String, String)] = [
            (#"{"minimum":"x"}"#, "/minimum"), (#"{"type":"str"}"#, "/type"), (#"{"required":"a"}"#, "/required"),
            (#"{"minLength":-1}"#, "/minLength"), (#"{"items":[{}]}"#, "/items"), (#"{"properties":{"a":1}}"#, "/properties/a"),
            (#"{"allOf":[]}"#, "/allOf"), (#"{"uniqueItems":"yes"}"#, "/uniqueItems"), (#"{"enum":"a"}"#, "/enum"),
            (##"{"$defs":{"x":"y"}}"##, "/$defs/x"), ("3", ""), (##"{"not":[]}"##, "/not"), (##"{"$ref":5}"##, "/$ref"),
        ]
        for (schema, pointer) in cases {
            #expect(try schemaError(schema)?.pointer == pointer, "\(schema)")
        }
        #expect(try schemaError(#"{"x-unknown":{"anything":"goes"},"format":"whatever"}"#) == nil)
    }

    @Test func pointersAreEscapedAndOrdered() throws {
        let v = try violations(#"{"additionalProperties":{"type":"string"}}"#, #"{"b/c":1,"a~":2,"a":"ok"}"#)
        #expect(v.map(\.pointer) == ["/a~0", "/b~1c"])
        let ordered = try violations(#"{"items":{"type":"string"},"maxItems":1}"#, "[1,2,3,4,5,6,7,8,9,10,11]")
        #expect(ordered.map(\.pointer) == ["", "/0", "/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8", "/9", "/10"])
        #expect(try violations(#"{"items":{"type":"string"}}"#, "[1,2,3,4]", limit: 2).map(\.pointer) == ["/0", "/1"])
        #expect(try violations(#"{"type":"string"}"#, "1", limit: 0).isEmpty)
    }

    @Test func plistValuesReadAsJSON() throws {
        let dateSchema = try compile(#"{"type":"string","format":"date-time","pattern":"^2024-"}"#)
        #expect(dateSchema.validate(.date(Date(timeIntervalSince1970: 1_714_564_800))).isEmpty)
        #expect(try compile(#"{"type":"string","maxLength":4}"#).validate(.data(Data([1, 2, 3]))).isEmpty)  // "AQID"
        #expect(try compile(#"{"type":"array","uniqueItems":true}"#).validate(.set([.int(1), .real(1)])).count == 1)
        #expect(try compile(#"{"type":"integer","maximum":3}"#).validate(.uid(4)).first?.message == "expected a number at most 3, found 4")
        #expect(try compile(#"{"const":"2024-05-01T12:00:00Z"}"#).validate(.date(Date(timeIntervalSince1970: 1_714_564_800))).isEmpty)
    }
}

// MARK: - Differential test against Python's jsonschema

/// (schema, instance, compare pointers) as JSON text; `{"CF$UID": n}` is avoided (a UID in a
/// plist). Nulls are read as the builder publishes them, `"$null"`.
private let differentialCases: [(schema: String, instance: String, pointers: Bool)] = [
    ("true", #"{"a":[1]}"#, true), ("false", "0", true),
    (#"{"type":"string"}"#, #""x""#, true), (#"{"type":"string"}"#, "1", true),
    (#"{"type":"integer"}"#, "1.0", true), (#"{"type":"integer"}"#, "1.5", true),
    (#"{"type":"number"}"#, "true", true), (#"{"type":["array","object"]}"#, "[]", true),
    (#"{"type":["array","object"]}"#, #""s""#, true), (#"{"type":"boolean"}"#, "0", true),
    (#"{"properties":{"a":{"type":"string"}}}"#, #"{"a":"x","b":1}"#, true),
    (#"{"properties":{"a":{"type":"string"}}}"#, #"{"a":1}"#, true),
    (#"{"required":["a","b"]}"#, #"{"a":1}"#, true), (#"{"required":["a"]}"#, "[1]", true),
    (#"{"properties":{"a":true},"additionalProperties":false}"#, #"{"a":1,"b":2,"c":3}"#, true),
    (#"{"additionalProperties":{"type":"integer"}}"#, #"{"a":1,"b":"x"}"#, true),
    (#"{"patternProperties":{"^x":{"minimum":2}},"additionalProperties":false}"#, #"{"xa":1,"xb":3,"y":0}"#, true),
    (#"{"items":{"type":"integer"}}"#, #"[1,"a",3,"b"]"#, true),
    (#"{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}"#, #"["a",1]"#, true),
    (#"{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}"#, #"["a",1,2]"#, true),
    (#"{"prefixItems":[{"type":"string"}]}"#, #"[1,"extra"]"#, true),
    (#"{"minItems":2,"maxItems":3}"#, "[1]", true), (#"{"minItems":2,"maxItems":3}"#, "[1,2,3,4]", true),
    (#"{"minItems":2,"maxItems":3}"#, "[1,2]", true),
    (#"{"uniqueItems":true}"#, "[1,2,1.0]", true), (#"{"uniqueItems":true}"#, #"[1,true,"1"]"#, true),
    (#"{"uniqueItems":true}"#, #"[{"a":[1]},{"a":[1.0]}]"#, true), (#"{"uniqueItems":false}"#, "[1,1]", true),
    (#"{"enum":["a","b",3]}"#, "3.0", true), (#"{"enum":["a","b",3]}"#, #""c""#, true),
    (#"{"enum":[[1,2],{"k":true}]}"#, #"{"k":true}"#, true), (#"{"enum":[1]}"#, "true", true),
    (#"{"const":{"a":[1,2]}}"#, #"{"a":[1,2.0]}"#, true), (#"{"const":false}"#, "0", true),
    (#"{"minimum":1.5}"#, "1", true), (#"{"minimum":1.5}"#, "1.5", true), (#"{"maximum":10}"#, "10.5", true),
    (#"{"exclusiveMinimum":0}"#, "0", true), (#"{"exclusiveMaximum":0}"#, "-0.5", true),
    (#"{"maximum":9007199254740992}"#, "9007199254740993", true), (#"{"minimum":0}"#, #""-1""#, true),
    (#"{"multipleOf":3}"#, "9", true), (#"{"multipleOf":3}"#, "10", true),
    (#"{"minLength":2}"#, #""é""#, true), (#"{"maxLength":2}"#, #""💩💩""#, true), (#"{"maxLength":1}"#, "\"e\u{301}\"", true),
    (#"{"minLength":3,"maxLength":5}"#, #""abcdef""#, true),
    (#"{"pattern":"b+"}"#, #""abbc""#, true), (#"{"pattern":"^[a-z]+$"}"#, #""abC""#, true), (#"{"pattern":"^\\d{3}$"}"#, #""123""#, true),
    (#"{"pattern":"x"}"#, "5", true),
    (#"{"format":"date-time"}"#, #""2024-05-01T12:00:00Z""#, true), (#"{"format":"date-time"}"#, #""2024-02-30T12:00:00Z""#, true),
    (#"{"format":"date-time"}"#, #""2024-05-01T12:00:00.5+02:00""#, true), (#"{"format":"date-time"}"#, #""2024-05-01""#, true),
    (#"{"format":"date-time"}"#, #""2024-05-01t12:00:00z""#, true), (#"{"format":"date-time"}"#, #""2024-05-01T24:00:00Z""#, true),
    (#"{"format":"email"}"#, #""joe.bloggs@example.com""#, true), (#"{"format":"email"}"#, #""no-at-sign""#, true),
    (#"{"format":"uri"}"#, #""https://example.com/path?q=1#frag""#, true), (#"{"format":"uri"}"#, #""mailto:joe@example.com""#, true),
    (##"{"$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}"##, ##"{"a":1}"##, true),
    (##"{"definitions":{"n":{"minimum":0}},"items":{"$ref":"#/definitions/n"}}"##, "[1,-1,2,-2]", true),
    (##"{"properties":{"kids":{"items":{"$ref":"#"}}},"required":["id"]}"##, ##"{"id":1,"kids":[{"id":2},{"kids":[{}]}]}"##, true),
    (##"{"properties":{"a":{"type":"integer"},"b":{"$ref":"#/properties/a"}}}"##, ##"{"a":1,"b":"x"}"##, true),
    (#"{"allOf":[{"type":"integer"},{"minimum":5}]}"#, "4.5", true),
    (#"{"anyOf":[{"type":"string"},{"minimum":5}]}"#, "4", true), (#"{"anyOf":[{"type":"string"},{"minimum":5}]}"#, "6", true),
    (#"{"oneOf":[{"type":"integer"},{"minimum":5}]}"#, "7", true), (#"{"oneOf":[{"type":"integer"},{"minimum":5}]}"#, "5.5", true),
    (#"{"not":{"type":"object"}}"#, "{}", true), (#"{"not":{"type":"object"}}"#, "[]", true),
    (#"{"minProperties":1}"#, "{}", true), (#"{"maxProperties":1}"#, #"{"a":1,"b":2}"#, true),
    (#"{"properties":{"a/b":{"type":"string"},"c~d":{"type":"string"}}}"#, #"{"a/b":1,"c~d":2}"#, true),
    (#"{"contains":{"type":"string"},"maxContains":1}"#, #"["a","b",1]"#, true),
    (#"{"if":{"type":"string"},"then":{"minLength":2},"else":{"minimum":0}}"#, "-1", true),
    (#"{"dependentRequired":{"a":["b"]}}"#, #"{"a":1}"#, true), (#"{"propertyNames":{"maxLength":2}}"#, #"{"abc":1}"#, true),
    (#"{"unknownKeyword":{"type":"string"},"type":"integer"}"#, "2", true),
    (#"{"type":"null"}"#, "null", true), (#"{"type":"null"}"#, #""x""#, true), (#"{"type":"null"}"#, "0", true),
    (#"{"type":["string","null"]}"#, "null", true), (#"{"type":["string","null"]}"#, "1", true), (#"{"type":"string"}"#, "null", true),
    (#"{"properties":{"m":{"type":["string","null"],"minLength":2}}}"#, #"{"m":null,"n":null}"#, true),
    (#"{"properties":{"m":{"type":"object"}}}"#, #"{"m":null}"#, true), (#"{"required":["a"]}"#, #"{"a":null}"#, true),
    (#"{"enum":[null,"a"]}"#, "null", true), (#"{"enum":["a"]}"#, "null", true), (#"{"const":null}"#, "null", true),
    (#"{"const":null}"#, "false", true), (#"{"uniqueItems":true}"#, "[null,null]", true),
    (#"{"items":{"type":"integer"}}"#, "[1,null,2]", true), (#"{"minimum":0,"format":"email","maxItems":0}"#, "null", true),
    (#"{"not":{"type":"null"}}"#, "null", true), (#"{"oneOf":[{"type":"null"},{"enum":[null]}]}"#, "null", true),
]

@Suite("JSON Schema versus Python jsonschema")
struct JSONSchemaDifferentialTests {
    static let script = #"""
        import json, sys
        from jsonschema import Draft202012Validator as V
        def ptr(path):
            return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
        out = []
        for case in json.load(sys.stdin):
            v = V(case["schema"], format_checker=V.FORMAT_CHECKER)
            errors = list(v.iter_errors(case["instance"]))
            out.append({"valid": not errors, "pointers": sorted({ptr(e.absolute_path) for e in errors})})
        json.dump(out, sys.stdout)
        """#

    /// Runs every case through one python3 process; nil when jsonschema is not installed.
    static func python(_ cases: [(schema: String, instance: String, pointers: Bool)]) throws -> PlistValue? {
        let input = "[" + cases.map { #"{"schema":\#($0.schema),"instance":\#($0.instance)}"# }.joined(separator: ",\n") + "]"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitForExit()
        guard process.terminationStatus == 0 else { return nil }
        return try JSONPlist.decode(Array(output))
    }

    @Test func agreesWithPythonJSONSchema() throws {
        #expect(differentialCases.count >= 60)
        guard let results = try Self.python(differentialCases)?.arrayValue else {
            Issue.record("python3 with jsonschema is needed for the differential test")
            return
        }
        try #require(results.count == differentialCases.count)
        var agreed = 0
        for (i, c) in differentialCases.enumerated() {
            let ours = try violations(c.schema, c.instance)
            let theirValid = results[i]["valid"]?.boolValue
            let theirPointers = Set((results[i]["pointers"]?.arrayValue ?? []).compactMap(\.stringValue))
            #expect(ours.isEmpty == theirValid, "case \(i): \(c.schema) / \(c.instance): ours \(ours)")
            if c.pointers {
                #expect(Set(ours.map(\.pointer)) == theirPointers, "case \(i): \(c.schema) / \(c.instance): ours \(ours)")
            }
            if ours.isEmpty == theirValid, !c.pointers || Set(ours.map(\.pointer)) == theirPointers { agreed += 1 }
        }
        #expect(agreed == differentialCases.count)
    }
}
