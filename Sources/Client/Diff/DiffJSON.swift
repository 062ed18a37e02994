import FolioPlist
import FolioPublished

/// `folio diff --format json`: the schema is documented in docs/diff-json.md.
extension ContentDiff {
    static let jsonSchema = "folio-diff/1"

    func json() -> JSONOut {
        .object([
            ("schema", .string(Self.jsonSchema)),
            ("result", .string(isEmpty ? "same" : "different")),
            ("equal", .bool(isEmpty)),
            ("from", Self.side(from)), ("to", Self.side(to)),
            ("summary", .string(summary)),
            ("manifest", .array(manifest.map(Self.field))),
            ("signing", .object([("changes", .array(signing.map(JSONOut.string))), ("old", .optional(oldSigning)), ("new", .optional(newSigning))])),
            ("releases", .array(releases.map(Self.release))),
            ("added", .array(added.map(Self.preview))),
            ("removed", .array(removed.map(Self.preview))),
            ("changed", .array(changed.map(Self.changedEntry))),
        ])
    }

    /// The document printed on error (exit 2).
    static func errorJSON(_ message: String, code: Int32) -> JSONOut {
        .object([("schema", .string(jsonSchema)), ("result", .string("error")), ("error", .object([("code", .int(Int(code))), ("message", .string(message))]))])
    }

    static func side(_ s: Side) -> JSONOut {
        .object([("label", .string(s.label)), ("version", .int(s.version)), ("createdAt", .value(.date(s.createdAt)))])
    }

    static func field(_ f: FieldChange) -> JSONOut {
        .object([("field", .string(f.field)), ("label", .string(f.label)), ("significant", .bool(f.significant)), ("old", .optional(f.old)), ("new", .optional(f.new))])
    }

    static func release(_ r: ReleaseChange) -> JSONOut {
        .object([("id", .int(r.id)), ("old", .optional(r.old.map { .string($0.summary) })), ("new", .optional(r.new.map { .string($0.summary) }))])
    }

    static func preview(_ p: EntryPreview) -> JSONOut {
        let e = p.entry
        return .object([
            ("path", .string(e.path)), ("kind", .optional(e.kind.map(PlistValue.string))), ("contentType", .string(e.contentType)),
            ("size", .int(e.size)), ("sha256", .string(e.sha256)), ("locale", .optional(e.locale.map(PlistValue.string))),
            ("content", .array(p.leaves.map { .object([("at", .string($0.path)), ("value", .value($0.value))]) })),
            ("more", .int(p.more)), ("note", .optional(p.note.map(PlistValue.string))),
        ])
    }

    static func changedEntry(_ c: EntryChange) -> JSONOut {
        .object([
            ("path", .string(c.path)), ("kind", .optional(c.kind.map(PlistValue.string))), ("contentType", .string(c.contentType)),
            ("asset", .bool(c.isAsset)), ("oldSHA256", .string(c.oldSHA)), ("newSHA256", .string(c.newSHA)),
            ("metadata", .array(c.metadata.map(change))), ("changes", .array(c.changes.map(change))),
            ("truncated", .bool(c.truncated)), ("approximate", .bool(c.approximate)),
        ])
    }

    static func change(_ ch: PlistChange) -> JSONOut {
        var fields: [(String, JSONOut)] = [("op", .string(ch.op.rawValue)), ("at", .string(ch.pathText)), ("path", .array(ch.path.map(component)))]
        switch ch.op {
        case .change, .add, .remove: fields += [("old", .optional(ch.old)), ("new", .optional(ch.new))]
        case .move: fields += [("from", .int(ch.from ?? 0)), ("to", .int(ch.to ?? 0))]
        }
        if let index = ch.index { fields.append(("index", .int(index))) }
        return .object(fields)
    }

    static func component(_ c: PlistPathComponent) -> JSONOut {
        switch c {
        case .key(let k): return .string(k)
        case .index(let i): return .int(i)
        case .match(let key, let value): return .object([("key", .string(key)), ("value", .value(value))])
        }
    }
}
