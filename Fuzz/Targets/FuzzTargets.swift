import FolioCatalogs
import FolioHTTPCore
import FolioLocalization
import FolioPlist
import FolioPlistXML
import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// One fuzz target: a name (the corpus directory, `FOLIO_FUZZ_TARGET`) and the function that feeds
/// an input to a reader and checks what it can afford to check. Any input is fine; a trap is a bug.
package struct FuzzTarget: Sendable {
    /// The target's name, e.g. `binary-plist`.
    package let name: String
    /// What the target reads, for `folio-fuzz --list`.
    package let summary: String
    /// Runs one input.
    package let run: @Sendable (UnsafeRawBufferPointer) -> Void

    /// Runs one input held in an array.
    package func callAsFunction(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { run($0) }
    }
}

/// Every fuzz target, one per reader of outside input.
package enum FuzzTargets {
    package static let all: [FuzzTarget] = [
        FuzzTarget(name: "binary-plist", summary: "bplist00 reader; decode, encode, decode gives the same value", run: binaryPlist),
        FuzzTarget(name: "xml-plist", summary: "XML plist reader; what decodes re-encodes to a fixed point", run: xmlPlist),
        FuzzTarget(name: "json-plist", summary: "JSON plist reader; what decodes re-encodes to a fixed point", run: jsonPlist),
        FuzzTarget(name: "strings", summary: ".strings parser, then compile and look up", run: stringsFile),
        FuzzTarget(name: "stringsdict", summary: ".stringsdict parser, then compile and look up", run: stringsDict),
        FuzzTarget(name: "xcstrings", summary: ".xcstrings parser, then compile and look up", run: xcstrings),
        FuzzTarget(name: "xliff", summary: "XLIFF 1.2/2.x parser, then compile and look up", run: xliff),
        FuzzTarget(name: "po", summary: "gettext .po parser (Plural-Forms included), then compile and look up", run: poFile),
        FuzzTarget(name: "plural-forms", summary: "gettext Plural-Forms expressions, parsed and evaluated", run: pluralForms),
        FuzzTarget(name: "compiled-catalog", summary: "the client's reader of published catalogs, then look up", run: compiledCatalog),
        FuzzTarget(name: "manifest", summary: "manifest loader; what loads re-encodes to the same manifest", run: manifest),
        FuzzTarget(
            name: "signed-manifest", summary: "signed manifests, key lists and key files; what verifies is what the plain reader reads",
            run: signedManifest),
        FuzzTarget(name: "http-request", summary: "the edge's request-head parser; views stay in the buffer", run: httpRequest),
        FuzzTarget(name: "http2-frames", summary: "the edge's HTTP/2 server side and stream bridge; one request per stream, none smuggled", run: http2Frames),
        FuzzTarget(name: "http2-flood-guard", summary: "the frame-header scanner before libnghttp2; whole and in pieces find the same flood", run: http2FloodGuard),
        FuzzTarget(name: "http-response", summary: "the client's response reader, inflate and manifest", run: httpResponse),
        FuzzTarget(name: "gzip", summary: "gzip inflate with a size limit; deflate round trip", run: gzip),
        FuzzTarget(name: "brotli", summary: "brotli decode with a size limit; round trip", run: brotli),
        FuzzTarget(name: "tls-client-hello", summary: "a connection's first bytes read as a TLS ClientHello (SNI, ALPN)", run: tlsClientHello),
        FuzzTarget(name: "delta", summary: "deltas, heads and plist edits; diff's edit rebuilds the target", run: delta),
        FuzzTarget(name: "manifest-edit", summary: "the manifest edit made in place on two files; what it makes rebuilds the target", run: manifestEdit),
        FuzzTarget(name: "json-schema", summary: "JSON Schema checker: schema and instance; compile, validate, bounded", run: jsonSchema),
        FuzzTarget(name: "content-json", summary: "content JSON reader; what reads encodes to a bplist that reads back the same", run: contentJSON),
        FuzzTarget(name: "content-yaml", summary: "content YAML reader (Yams, core schema); reads back the same", run: contentYAML),
        FuzzTarget(name: "yaml-simple", summary: "the flat-YAML fast path; what it reads, Yams reads the same", run: yamlSimple),
        FuzzTarget(name: "content-toml", summary: "content TOML reader (TOMLKit); reads back the same", run: contentTOML),
        FuzzTarget(name: "front-matter", summary: "Markdown front matter (YAML or TOML) and body split", run: frontMatter),
        FuzzTarget(name: "project-file", summary: "folio.toml rules, globs and .folioignore patterns", run: projectFile),
    ]

    /// The target called `name`.
    package static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    // MARK: Property lists

    /// bplist00: what decodes re-encodes, decodes to the same value, and encodes to the same bytes.
    /// The other formats' encoders must not trap on it either (`folio plist` converts it).
    package static func binaryPlist(_ data: UnsafeRawBufferPointer) {
        guard let value = try? BinaryPlist.decode(Array(data)) else { return }
        let encoded = BinaryPlist.encode(value)
        let again: PlistValue
        do { again = try BinaryPlist.decode(encoded) } catch {
            violated("binary-plist", "the re-encoded value does not decode: \(error)")
        }
        check(same(value, again), "binary-plist", "decode(encode(v)) differs from v")
        check(BinaryPlist.encode(again) == encoded, "binary-plist", "encoding is not deterministic")
        _ = try? XMLPlist.encode(value)
        _ = try? JSONPlist.encode(value)
        _ = try? JSONPlist.encode(value, pretty: false)
    }

    /// XML: what decodes re-encodes, and that encoding is a fixed point (decode and encode again
    /// gives the same bytes). The binary form holds the value exactly.
    package static func xmlPlist(_ data: UnsafeRawBufferPointer) {
        guard let value = try? XMLPlist.decode(Array(data)) else { return }
        textRoundTrip(value, "xml-plist", encode: XMLPlist.encode, decode: XMLPlist.decode)
        binaryRoundTrip(value, "xml-plist")
        _ = try? JSONPlist.encode(value)
    }

    /// JSON: as XML.
    package static func jsonPlist(_ data: UnsafeRawBufferPointer) {
        guard let value = try? JSONPlist.decode(Array(data)) else { return }
        textRoundTrip(value, "json-plist", encode: { v throws(PlistError) in try JSONPlist.encode(v) }, decode: JSONPlist.decode)
        binaryRoundTrip(value, "json-plist")
        _ = try? XMLPlist.encode(value)
    }

    private static func textRoundTrip(
        _ value: PlistValue, _ target: String,
        encode: (PlistValue) throws(PlistError) -> [UInt8], decode: ([UInt8]) throws(PlistError) -> PlistValue
    ) {
        // A value may have no form in the format (a control character in an XML string): an
        // error, not a bug. What is written must read back, and writing that again is stable.
        guard let first = try? encode(value) else { return }
        let second: [UInt8]
        do { second = try encode(try decode(first)) } catch {
            violated(target, "its own output does not read back: \(error)\n\(String(decoding: first, as: UTF8.self))")
        }
        check(first == second, target, "encoding is not a fixed point:\n\(String(decoding: first, as: UTF8.self))\n---\n\(String(decoding: second, as: UTF8.self))")
    }

    private static func binaryRoundTrip(_ value: PlistValue, _ target: String) {
        let decoded: PlistValue
        do { decoded = try BinaryPlist.decode(BinaryPlist.encode(value)) } catch {
            violated(target, "the binary form of the value does not decode: \(error)")
        }
        check(same(decoded, value), target, "the binary form of the value decodes to another value")
    }

    /// Plist equality that counts NaN equal to NaN (reals and dates).
    package static func same(_ a: PlistValue, _ b: PlistValue) -> Bool {
        func sameDouble(_ x: Double, _ y: Double) -> Bool { x.isNaN ? y.isNaN : x.bitPattern == y.bitPattern }
        switch (a, b) {
        case (.real(let x), .real(let y)): return sameDouble(x, y)
        case (.date(let x), .date(let y)): return sameDouble(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case (.array(let x), .array(let y)), (.set(let x), .set(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.dict(let x), .dict(let y)):
            return x.count == y.count && x.allSatisfy { key, v in y[key].map { same(v, $0) } ?? false }
        default: return a == b
        }
    }

    // MARK: Catalogs

    package static func stringsFile(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        _ = StringsFile.parse(bytes)
        catalog(StringsFile.parseCatalog(bytes))
    }

    package static func stringsDict(_ data: UnsafeRawBufferPointer) {
        catalog(StringsDictFile.parse(Array(data)))
    }

    package static func xcstrings(_ data: UnsafeRawBufferPointer) {
        catalog(XCStringsFile.parse(Array(data)))
    }

    package static func xliff(_ data: UnsafeRawBufferPointer) {
        catalog(XLIFFFile.parse(Array(data)))
    }

    package static func poFile(_ data: UnsafeRawBufferPointer) {
        catalog(POFile.parseCatalog(Array(data)))
    }

    /// What a parsed file becomes: each section compiled, published (binary plist), read back as
    /// the client reads it, and every key looked up and formatted as `folio strings` does.
    private static func catalog(_ parsed: ParsedCatalogFile) {
        for section in parsed.sections.prefix(8) {
            var strings: [String: CatalogValue] = [:]
            for message in section.messages {
                guard let value = message.value else { continue }
                strings[message.key] = value
                forEachText(value) { _ = try? FormatSpecifier.parse($0) }
                if let source = message.source, case .string(let s) = source, case .string(let t) = value {
                    _ = FormatSpecifier.compare(source: s, translation: t)
                }
            }
            let compiled = CompiledCatalog(
                table: "Localizable", locale: section.locale.isEmpty ? "en" : section.locale,
                pluralForms: parsed.pluralForms?.text, strings: strings)
            if let back = try? CompiledCatalog(bytes: BinaryPlist.encode(compiled.plist)) {
                check(back == compiled, "catalog", "a compiled catalog reads back different")
            }
            lookUp(compiled)
        }
    }

    /// The published catalog reader (what the client does with a catalog object).
    package static func compiledCatalog(_ data: UnsafeRawBufferPointer) {
        guard let catalog = try? CompiledCatalog(bytes: Array(data)) else { return }
        lookUp(catalog)
    }

    /// Looks every key (at most 64) up with a few counts and arguments.
    private static func lookUp(_ catalog: CompiledCatalog) {
        let lookup = CatalogLookup(chain: [catalog])
        for key in catalog.strings.keys.sorted().prefix(64) {
            for count in [0, 1, 2, 5, 11, 101] {
                _ = lookup.text(for: key, count: count)
                _ = lookup.pluralChoice(for: key, count: count)
                _ = lookup.string(for: key, arguments: [.int(Int64(count)), .string("x"), .double(2.5)])
            }
            _ = lookup.string(for: key)
        }
    }

    private static func forEachText(_ value: CatalogValue, _ body: (String) -> Void) {
        switch value {
        case .string(let s): body(s)
        case .plural(let variants): variants.values.forEach(body)
        case .gettextPlural(let forms): forms.forEach(body)
        case .device(let devices): devices.values.forEach { forEachText($0, body) }
        case .substitutions(let format, let variables):
            body(format)
            for v in variables.values { v.variants.values.forEach(body) }
        }
    }

    /// A `Plural-Forms` header value: parse, evaluate for counts around every boundary a rule
    /// can have; the index must be in range.
    package static func pluralForms(_ data: UnsafeRawBufferPointer) {
        let text = String(decoding: data, as: UTF8.self)
        guard let expression = try? PluralFormsExpression(text) else { return }
        let counts: [UInt64] = [0, 1, 2, 3, 4, 5, 10, 11, 12, 19, 20, 21, 99, 100, 101, 111, 1000, 1_000_000, .max / 2, .max - 1, .max]
        for n in counts {
            let index = expression.index(for: n)
            check(index >= 0 && index < expression.nplurals, "plural-forms", "index \(index) for n=\(n) outside 0..<\(expression.nplurals)")
        }
        check((try? PluralFormsExpression(expression.text)) == expression, "plural-forms", "the recorded text parses to another expression")
    }

    // MARK: Manifest

    /// Signed manifests verified under the root they name (so that a valid input verifies), key
    /// lists and key files. What verifies must be exactly the manifest that `Manifest(bytes:)`
    /// (which edges and readers use) reads from the same bytes: no parser differential.
    package static func signedManifest(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        if let signed = try? SignedManifest.decode(bytes) {
            let trust = Trust(roots: [signed.keyList.keyList.root])
            let now = signed.manifest.createdAt
            if let verified = try? trust.verify(bytes, now: now) {
                check((try? Manifest(bytes: bytes)) == verified.manifest, "signed-manifest", "the plain reader reads another manifest than the one verified")
                check(verified.validSigners.count >= verified.keyList.keyList.threshold, "signed-manifest", "verified with fewer signers than the threshold")
            }
            _ = signed.summary
        }
        _ = try? SignedKeyList(bytes: bytes).isSignedByItsRoot
        if bytes.count <= 4096, let text = String(validating: bytes, as: UTF8.self) {
            _ = try? PublicKey(fileText: text, path: "fuzz")
            _ = try? SecretKey(fileText: text, path: "fuzz")
        }
    }

    /// A manifest that loads re-encodes (binary) and loads to the same manifest; its JSON mirror
    /// is written without trapping.
    package static func manifest(_ data: UnsafeRawBufferPointer) {
        guard let manifest = try? Manifest(bytes: Array(data)) else { return }
        do {
            let again = try Manifest(bytes: BinaryPlist.encode(manifest.plist))
            check(again == manifest, "manifest", "the re-encoded manifest loads different")
        } catch {
            violated("manifest", "the re-encoded manifest does not load: \(error)")
        }
        _ = try? JSONPlist.encode(manifest.plist)
        for entry in manifest.entries.prefix(8) { _ = manifest.entry(entry.path) }
    }

    // MARK: HTTP

    /// The edge's limits, and small ones so that every limit is reached.
    private static let requestParsers = [
        HTTPRequestParser(maxTargetBytes: 8192, maxHeadBytes: 16384, maxHeaderCount: 100),
        HTTPRequestParser(maxTargetBytes: 24, maxHeadBytes: 160, maxHeaderCount: 4),
    ]

    /// Request heads as the edge reads them from a connection: one after another, each body
    /// skipped. A request's views lie inside its head; the head alone parses the same.
    package static func httpRequest(_ data: UnsafeRawBufferPointer) {
        for parser in requestParsers {
            var offset = 0
            var requests = 0
            while offset < data.count, requests < 16 {
                let rest = UnsafeRawBufferPointer(rebasing: data[offset...])
                let result = parser.parse(rest)
                guard case .request(let request, let length) = result else {
                    if case .failure(let error) = result {
                        check((400...505).contains(error.status), "http-request", "status \(error.status)")
                    }
                    break
                }
                check(length > 0 && length <= rest.count, "http-request", "head length \(length) of \(rest.count) bytes")
                let head = UnsafeRawBufferPointer(rebasing: rest[0..<length])
                var views = [request.target, request.acceptEncoding, request.acceptLanguage]
                let c = request.conditions
                views += [c.ifMatch, c.ifNoneMatch, c.ifModifiedSince, c.ifUnmodifiedSince, c.ifRange, c.range]
                for case let view? in views {
                    check(inside(view.bytes, head), "http-request", "a view lies outside the head")
                }
                check(request.contentLength >= 0, "http-request", "negative Content-Length")
                check(parser.parse(head) == result, "http-request", "the head alone parses differently")
                check(request.owned() == request, "http-request", "an owned copy differs")
                _ = request.method.name
                requests += 1
                offset += length
                if request.chunked { break }  // the edge answers and closes
                offset += min(request.contentLength, data.count - offset)
            }
        }
    }

    private static func inside(_ view: UnsafeRawBufferPointer, _ buffer: UnsafeRawBufferPointer) -> Bool {
        guard let v = view.baseAddress else { return view.isEmpty }
        guard let b = buffer.baseAddress else { return false }
        return v >= b && v + view.count <= b + buffer.count
    }

    /// The client's reading of a response (`folio sync`'s plain-HTTP path). The first byte picks
    /// how the rest arrives (the size of each read); then what sync does with a body: inflate
    /// it (with a limit) and load it as a manifest.
    package static func httpResponse(_ data: UnsafeRawBufferPointer) {
        guard let first = data.first else { return }
        let bytes = Array(data.dropFirst())
        let step = first == 0 ? max(bytes.count, 1) : Int(first)
        let maxBody = 8192
        var reader = QuickHTTP.ResponseReader(maxBody: maxBody)
        let response: QuickHTTP.Response
        do {
            var complete = false
            var i = 0
            while i < bytes.count, !complete {
                let end = min(i + step, bytes.count)
                complete = try reader.append(bytes[i..<end])
                i = end
            }
            let reusable: Bool
            (response, reusable) = try reader.finish(closed: !complete)
            check(!reusable || complete, "http-response", "a connection the server closed is reusable")
        } catch {
            return
        }
        check(response.body.count <= maxBody, "http-response", "body of \(response.body.count) bytes past the limit")
        check(response.headBytes <= bytes.count, "http-response", "head of \(response.headBytes) bytes in \(bytes.count)")
        guard let body = try? ContentDecoding.decode(response.body, coding: response.headers.first(name: "content-encoding"), maxSize: maxBody)
        else { return }
        check(body.count <= maxBody, "http-response", "decoded past the limit")
        _ = try? Manifest(bytes: body)
    }

    /// gzip: inflate with a limit never exceeds it; deflate then inflate gives the input back.
    package static func gzip(_ data: UnsafeRawBufferPointer) {
        codec("gzip", Array(data), decode: { try Gzip.decompress($0, maxSize: $1) }, encode: { try Gzip.compress($0, level: 1) })
    }

    /// brotli: decoding with a limit never exceeds it (nor traps on a stream that claims more);
    /// compress then decode gives the input back.
    package static func brotli(_ data: UnsafeRawBufferPointer) {
        codec("brotli", Array(data), decode: { try Brotli.decompress($0, maxSize: $1) }, encode: { try Brotli.compress($0, quality: 1) })
    }

    /// A content coding's checks: `bytes` decoded with a limit stays within it, and `bytes`
    /// encoded then decoded is `bytes`.
    static func codec(
        _ name: String, _ bytes: [UInt8], decode: ([UInt8], Int) throws -> [UInt8], encode: ([UInt8]) throws -> [UInt8]
    ) {
        let limit = 1 << 16
        if let out = try? decode(bytes, limit) {
            check(out.count <= limit, name, "decoded \(out.count) bytes past the limit \(limit)")
        }
        _ = try? decode(bytes, 16)
        do {
            let encoded = try encode(bytes)
            check(try decode(encoded, bytes.count) == bytes, name, "round trip differs")
        } catch {
            violated(name, "round trip failed: \(error)")
        }
    }

    /// The ClientHello reader the edge runs before TLS during ACME: any bytes give an answer; a
    /// hello read from them is read the same with more bytes after it, and every shorter prefix
    /// of it is incomplete or the same hello.
    package static func tlsClientHello(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let parsed = TLSClientHello.parse(bytes)
        guard case .hello = parsed else { return }
        check(TLSClientHello.parse(bytes + [0x16, 0x03, 0x01]) == parsed, "tls-client-hello", "trailing bytes changed the hello")
        let cut = bytes.count / 2
        let prefix = TLSClientHello.parse(bytes[..<cut])
        check(prefix == .incomplete || prefix == parsed || prefix == .notHello, "tls-client-hello", "a prefix read as another hello")
    }

    // MARK: Checks

    static func check(_ condition: @autoclosure () throws -> Bool, _ target: String, _ message: @autoclosure () -> String) {
        let ok: Bool
        do { ok = try condition() } catch { violated(target, "\(message()) (\(error))") }
        if !ok { violated(target, message()) }
    }

    /// A broken invariant: a crash, as the fuzzer counts them.
    static func violated(_ target: String, _ message: String) -> Never {
        fatalError("fuzz invariant broken (\(target)): \(message)")
    }
}

// MARK: Deltas

extension FuzzTargets {
    /// Deltas and heads as a client reads them; and `[source, target]` pairs: the edit `diff`
    /// makes rebuilds the target, and any value applied as an edit ends in a value or a refusal.
    package static func delta(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        _ = try? DeltaHead(bytes: bytes)
        if let bundle = try? DeltaBundle(bytes: bytes) {
            _ = try? DeltaBundle.apply(bundle.manifest, to: bytes)
            let sample = PlistValue.array([.dict(["lines": .array([.string("a"), .string("b")]), "number": .int(1)])])
            for edit in bundle.objects.values { _ = try? PlistPatch.apply(edit, to: sample) }
        }
        guard let value = try? BinaryPlist.decode(bytes), case .array(let pair) = value, pair.count == 2 else { return }
        _ = try? PlistPatch.apply(pair[1], to: pair[0])
        guard let edit = PlistPatch.diff(pair[0], pair[1]) else {
            check(PlistPatch.identical(pair[0], pair[1]), "delta", "no edit between different values")
            return
        }
        do {
            let rebuilt = try PlistPatch.apply(edit, to: pair[0])
            check(PlistPatch.identical(rebuilt, pair[1]), "delta", "the edit does not rebuild the target")
        } catch {
            violated("delta", "the edit diff made does not apply: \(error)")
        }
    }
}
