import FolioBuilder
import FolioPlist

extension FuzzTargets {
    /// JSON Schema checker: a schema and an instance from one input; compile, validate, never trap.
    // The input is schema JSON, a 0x00 byte, then instance JSON (none: the schema checks itself).
    // Pathological patterns are bounded by the checker's regex budget and `$ref` cycles by its memo.
    package static func jsonSchema(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let split = bytes.firstIndex(of: 0) ?? bytes.count
        guard let document = try? JSONPlist.decode(Array(bytes[..<split])) else { return }
        let schema: JSONSchema
        do { schema = try JSONSchema(document, source: "fuzz.json") } catch {
            _ = error.description
            return
        }
        let instance = split < bytes.count ? (try? JSONPlist.decode(Array(bytes[(split + 1)...]))) : document
        guard let instance else { return }
        let all = schema.validate(instance)
        let first = schema.validate(instance, limit: 1)
        precondition(all.count <= 100 && first.count == min(1, all.count), "json-schema: the limit is not honoured")
        precondition(all.allSatisfy { $0.pointer.isEmpty || $0.pointer.hasPrefix("/") }, "json-schema: a pointer is not a JSON pointer")
        for violation in all { _ = violation.description }
    }
}
