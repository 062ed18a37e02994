import FolioBuilder
import FolioPlist
import FolioPublished

// MARK: Content readers

extension FuzzTargets {
    /// JSON content files: what reads survives the binary form, every key of the root locates, errors have positions.
    package static func contentJSON(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let value = structured(bytes, .json, "content-json")
        if case .dict(let dict)? = value {
            for key in dict.keys.prefix(8) {
                let pointer = StructuredReader.pointer([key])
                readerCheck(StructuredReader.locate(pointer, in: bytes, format: .json) != nil, "content-json", "the key \(pointer) does not locate")
            }
        }
    }

    /// YAML content files: what reads survives the binary form, the root locates, errors have positions.
    package static func contentYAML(_ data: UnsafeRawBufferPointer) {
        _ = structured(Array(data), .yaml, "content-yaml")
    }

    /// The fast reader of flat YAML against Yams: whatever it reads, Yams reads the same.
    package static func yamlSimple(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        guard String(validating: bytes, as: UTF8.self) != nil, let fast = SimpleYAML.mapping(bytes) else { return }
        let general: PlistValue
        do { general = try ContentYAML.readWithYams(bytes) } catch {
            fatalError("fuzz invariant broken (yaml-simple): the fast path read \(fast), Yams failed: \(error)")
        }
        readerCheck(same(.dict(fast), general), "yaml-simple", "the fast path read \(fast), Yams \(general)")
    }

    /// The in-place manifest edit on any two files (the input: the source's length in two
    /// bytes, big-endian, the source, then the target): never a trap or hang, and an edit it
    /// makes rebuilds the target, when the target is as the deterministic writer writes it.
    package static func manifestEdit(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        guard bytes.count >= 2 else { return }
        let rest = bytes[2...]
        let cut = min(Int(bytes[0]) << 8 | Int(bytes[1]), rest.count)
        let (source, target) = (Array(rest.prefix(cut)), Array(rest.dropFirst(cut)))
        guard let outcome = ManifestEdit.make(from: source, to: target) else { return }
        guard let from = try? BinaryPlist.decode(source), let to = try? BinaryPlist.decode(target), BinaryPlist.encode(to) == target else { return }
        let rebuilt: PlistValue
        do { rebuilt = try PlistPatch.apply(outcome.edit, to: from) } catch {
            fatalError("fuzz invariant broken (manifest-edit): the edit does not apply: \(error)")
        }
        readerCheck(BinaryPlist.encode(rebuilt) == target, "manifest-edit", "the edit does not rebuild the target")
    }

    /// TOML content files: what reads is a dictionary that survives the binary form, errors have positions.
    package static func contentTOML(_ data: UnsafeRawBufferPointer) {
        let value = structured(Array(data), .toml, "content-toml")
        if let value { readerCheck(value.dictValue != nil, "content-toml", "a TOML document read as a \(value.typeName)") }
    }

    /// Markdown front matter: the body is the file's tail, the matter survives the binary form, errors have positions.
    package static func frontMatter(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        _ = FrontMatter.locate("", in: bytes)
        _ = FrontMatter.locate("/title", in: bytes)
        let document: FrontMatterDocument
        do { document = try FrontMatter.split(bytes) } catch {
            readerCheckError(error, "front-matter")
            return
        }
        readerCheck(document.bodyLine >= 1, "front-matter", "body line \(document.bodyLine)")
        readerCheck(bytes.reversed().starts(with: document.body.utf8.reversed()), "front-matter", "the body is not the file's tail")
        readerCheck(document.matterFormat != nil || document.matter.isEmpty, "front-matter", "matter without a format")
        readerRoundTrip(.dict(document.matter), "front-matter")
    }

    /// Reads `bytes` as `format`, checking the error's position or the value's binary round trip and location.
    private static func structured(_ bytes: [UInt8], _ format: DataFormat, _ target: String) -> PlistValue? {
        let located = StructuredReader.locate("", in: bytes, format: format)
        _ = StructuredReader.locate("/0/a", in: bytes, format: format)
        let value: PlistValue
        do { value = try StructuredReader.read(bytes, format: format) } catch {
            readerCheckError(error, target)
            return nil
        }
        readerCheck(located != nil, target, "the root of a readable document does not locate")
        readerRoundTrip(value, target)
        nullPolicies(bytes, format, value, target)
        return value
    }

    /// The stricter null policies: `error` reads what `keep` read (a file it accepts has no
    /// null) or fails with a position; `omit` keeps no more values than `keep`.
    private static func nullPolicies(_ bytes: [UInt8], _ format: DataFormat, _ kept: PlistValue, _ target: String) {
        do {
            let strict = try StructuredReader.read(bytes, format: format, nulls: .error)
            readerCheck(same(strict, kept), target, "nulls = error read \(strict), keep \(kept)")
        } catch {
            readerCheckError(error, target)
        }
        do {
            let omitted = try StructuredReader.read(bytes, format: format, nulls: .omit)
            readerCheck(count(omitted) <= count(kept), target, "nulls = omit read more values than keep")
        } catch {
            readerCheckError(error, target)
        }
    }

    /// How many values `v` holds, itself included.
    private static func count(_ v: PlistValue) -> Int {
        switch v {
        case .array(let a), .set(let a): 1 + a.map(count).reduce(0, +)
        case .dict(let d): 1 + d.values.map(count).reduce(0, +)
        default: 1
        }
    }

    private static func readerRoundTrip(_ value: PlistValue, _ target: String) {
        let again: PlistValue
        do { again = try BinaryPlist.decode(BinaryPlist.encode(value)) } catch {
            fatalError("fuzz invariant broken (\(target)): the binary form does not decode: \(error)")
        }
        readerCheck(same(value, again), target, "the binary form decodes to another value")
    }

    private static func readerCheckError(_ error: ReadError, _ target: String) {
        readerCheck(error.line >= 1 && error.column >= 1 && !error.message.isEmpty, target, "an error without a position or message: \(error)")
    }

    private static func readerCheck(_ condition: Bool, _ target: String, _ message: @autoclosure () -> String) {
        if !condition { fatalError("fuzz invariant broken (\(target)): \(message())") }
    }
}
