import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// Localized catalogs on the real folio-edge: `/content/catalogs/<Table>.plist` negotiated by
// Accept-Language, explicit `/content/catalogs/<locale>/<Table>.plist` (also spelt
// non-canonically), and a publish that swaps the negotiation table.

/// Catalog entries written into a published fixture, as the Builder publishes them.
enum CatalogFixture {
    static let tableLocales = ["en", "es", "es-419", "fr", "pt-BR", "pt-PT", "zh-Hans", "zh-Hant"]
    static let infoLocales = ["de", "en"]

    /// A small catalog, compressible enough to have a gzip variant.
    static func catalog(_ locale: String, table: String, revision: Int = 1) -> [UInt8] {
        BinaryPlist.encode(
            .dict([
                "locale": .string(locale),
                "table": .string(table),
                "greeting": .string("hello from \(locale), revision \(revision)"),
                "filler": .string(String(repeating: "Shall I compare thee to a summer's day? ", count: 12)),
            ]))
    }

    static func index(developmentLanguage: String) -> [UInt8] {
        BinaryPlist.encode(.dict(["developmentLanguage": .string(developmentLanguage)]))
    }

    /// The default catalogs: `Localizable` in every test locale, `InfoPlist` in de and en, and the index.
    static func standard(developmentLanguage: String = "en") -> [(path: String, locale: String?, bytes: [UInt8])] {
        var out: [(path: String, locale: String?, bytes: [UInt8])] = []
        for l in tableLocales { out.append(("catalogs/\(l)/Localizable.plist", l, catalog(l, table: "Localizable"))) }
        for l in infoLocales { out.append(("catalogs/\(l)/InfoPlist.plist", l, catalog(l, table: "InfoPlist"))) }
        out.append(("catalogs/index.plist", nil, index(developmentLanguage: developmentLanguage)))
        return out
    }

    /// Writes the objects (and gzip variants where smaller) and a manifest.plist listing them
    /// next to the fixture's entries, with `version` (default: unchanged).
    @discardableResult
    static func publish(_ catalogs: [(path: String, locale: String?, bytes: [UInt8])], into fixture: EdgeFixture, version: Int? = nil) throws -> Manifest {
        let current = try fixture.manifest()
        var entries = current.entries.filter { !$0.path.hasPrefix("catalogs/") }
        for c in catalogs {
            let sha = ContentHash.sha256Hex(c.bytes)
            try FileIO.writeAtomically(c.bytes, to: fixture.root + "/objects/\(sha).plist")
            let gz = try Gzip.compress(c.bytes, level: 9)
            var gzipSize: Int?
            if gz.count < c.bytes.count {
                try FileIO.writeAtomically(gz, to: fixture.root + "/objects/\(sha).plist.gz")
                gzipSize = gz.count
            }
            entries.append(
                Manifest.Entry(path: c.path, sha256: sha, size: c.bytes.count, gzipSize: gzipSize, contentType: Manifest.plistContentType, locale: c.locale))
        }
        let manifest = Manifest(
            version: version ?? current.version, createdAt: current.createdAt, sourceRevision: current.sourceRevision,
            cacheHints: current.cacheHints, entries: entries)
        try FileIO.writeAtomically(BinaryPlist.encode(manifest.plist), to: fixture.root + "/manifest.plist")
        return manifest
    }
}

/// A published fixture with the standard catalogs and one edge for the whole suite.
struct LocaleEdgeTrait: SuiteTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let fixture = try EdgeFixture.make("edge-locale")
        defer { fixture.cleanup() }
        let manifest = try CatalogFixture.publish(CatalogFixture.standard(), into: fixture)
        let edge = try EdgeProcess.start(root: fixture.root)
        defer { edge.stop() }
        try await SharedEdge.$context.withValue(SharedEdgeContext(fixture: fixture, edge: edge, manifest: manifest)) {
            try await function()
        }
    }
}

extension EdgeIntegration {
    @Suite("folio-edge live: localized catalogs", .serialized, LocaleEdgeTrait())
    struct EdgeLocaleTests {
        let ctx: SharedEdgeContext

        static let manifestCacheControl = "public, max-age=60, stale-while-revalidate=300, stale-if-error=86400"
        static let negotiatedVary = "Accept-Language, Accept-Encoding"
        static let negotiated = "/content/catalogs/Localizable.plist"

        init() throws { ctx = try SharedEdge.current() }

        var port: Int { ctx.edge.port }

        func get(_ target: String, _ headers: [(String, String)] = []) throws -> EdgeResponse {
            try RawHTTPConnection.fetch(port: port, target, headers: headers)
        }

        func entry(_ locale: String, table: String = "Localizable") throws -> Manifest.Entry {
            try #require(ctx.manifest.entry("catalogs/\(locale)/\(table).plist"))
        }

        @Test("Accept-Language picks the locale by RFC 4647 lookup through CLDR parents")
        func negotiation() throws {
            let cases: [(String?, String)] = [
                (nil, "en"),
                ("es-MX", "es-419"),
                ("es-ES", "es"),
                ("es", "es"),
                ("zh-HK", "zh-Hant"),
                ("zh-TW", "zh-Hant"),
                ("zh-CN", "zh-Hans"),
                ("pt-AO", "pt-PT"),
                ("pt-BR,pt;q=0.9,en;q=0.8", "pt-BR"),
                ("en-GB", "en"),
                ("FR-ca", "fr"),
                ("fr;q=0.5, es;q=0.9", "es"),
                ("*", "en"),
                ("ja", "en"),
                ("ja, fr;q=0.1", "fr"),
                ("en_US, fr", "fr"),
                ("🙂, ;;;, q=1, de;x=1", "en"),
                ("es-MX, es;q=0", "en"),
                ("ja, en;q=0", "es"),
                ("*;q=0", "en"),
            ]
            for (header, locale) in cases {
                let r = try get(Self.negotiated, header.map { [("Accept-Language", $0)] } ?? [])
                let e = try entry(locale)
                #expect(r.status == 200, "\(header ?? "none")")
                #expect(r.header("Content-Language") == locale, "\(header ?? "none")")
                #expect(r.header("Vary") == Self.negotiatedVary)
                #expect(r.header("ETag") == "\"\(e.sha256)\"", "\(header ?? "none")")
                #expect(r.body == CatalogFixture.catalog(locale, table: "Localizable"), "\(header ?? "none")")
                #expect(r.header("Content-Length") == String(e.size))
                #expect(r.header("Cache-Control") == Self.manifestCacheControl)
                #expect(r.header("Content-Type") == "application/x-plist")
                #expect(r.header("Accept-Ranges") == "bytes")
                #expect(r.header("Content-Encoding") == nil)
            }
            // Each table negotiates among its own locales.
            let info = try get("/content/catalogs/InfoPlist.plist", [("Accept-Language", "de-AT, fr;q=0.9")])
            #expect(info.header("Content-Language") == "de")
            #expect(info.body == CatalogFixture.catalog("de", table: "InfoPlist"))
            #expect(try get(Self.negotiated, [("Accept-Language", "de-AT")]).header("Content-Language") == "en")
            #expect(try get("/content/catalogs/InfoPlist.plist", [("Accept-Language", "pt-BR")]).header("Content-Language") == "en")
        }

        @Test("the negotiated response is the explicit one plus Content-Language and Vary")
        func sameAsExplicit() throws {
            for encoding in [nil, "gzip"] {
                var headers = [("Accept-Language", "es-MX")]
                if let encoding { headers.append(("Accept-Encoding", encoding)) }
                let negotiated = try get(Self.negotiated, headers)
                let explicit = try get("/content/catalogs/es-419/Localizable.plist", encoding.map { [("Accept-Encoding", $0)] } ?? [])
                #expect(negotiated.status == 200 && explicit.status == 200)
                #expect(negotiated.body == explicit.body)
                #expect(explicit.header("Content-Language") == "es-419")
                #expect(explicit.header("Vary") == "Accept-Encoding")
                var a = negotiated.stableHeaders
                var b = explicit.stableHeaders
                #expect(a.removeValue(forKey: "vary") == Self.negotiatedVary)
                #expect(b.removeValue(forKey: "vary") == "Accept-Encoding")
                #expect(a == b)
            }
        }

        @Test("gzip: the precompressed variant of the negotiated locale, with its own ETag (curl)")
        func gzipVariant() throws {
            let e = try entry("pt-BR")
            let gzipSize = try #require(e.gzipSize, "the fixture catalog should have a gzip variant")
            let r = try EdgeCurl.get(ctx.edge.baseURL + Self.negotiated, headers: ["Accept-Encoding: gzip", "Accept-Language: pt-BR, en;q=0.5"])
            #expect(r.status == 200)
            #expect(r.header("Content-Encoding") == "gzip")
            #expect(r.header("Content-Language") == "pt-BR")
            #expect(r.header("Vary") == Self.negotiatedVary)
            #expect(r.header("Content-Length") == String(gzipSize))
            #expect(r.body == (try ctx.fixture.bytes(e.objectPath + ".gz")))
            #expect(try Gzip.decompress(r.body, maxSize: e.size) == CatalogFixture.catalog("pt-BR", table: "Localizable"))
            let etag = try #require(r.header("ETag"))
            #expect(etag != "\"\(e.sha256)\"" && etag.hasPrefix("\"\(e.sha256)-gz"))
            #expect(try get("/content/catalogs/pt-BR/Localizable.plist", [("Accept-Encoding", "gzip")]).header("ETag") == etag)
        }

        @Test("conditional requests: 304 with the negotiated ETag, Vary and Content-Language", .http1Only)
        func notModified() throws {
            let e = try entry("zh-Hant")
            let identityTag = "\"\(e.sha256)\""
            let gzipTag = try #require(try get(Self.negotiated, [("Accept-Language", "zh-HK"), ("Accept-Encoding", "gzip")]).header("ETag"))

            // A 304 followed by a pipelined request: it parses, so the 304 had no body.
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            try c.send(
                RawHTTPConnection.head("GET", Self.negotiated, headers: [("Accept-Language", "zh-HK"), ("If-None-Match", identityTag)])
                    + RawHTTPConnection.head("GET", Self.negotiated, headers: [("Accept-Language", "zh-HK"), ("Accept-Encoding", "gzip"), ("If-None-Match", "\"x\", \(gzipTag)")])
                    + RawHTTPConnection.head("GET", "/healthz"))
            let rs = try c.readResponses(["GET", "GET", "GET"])
            for (r, tag) in [(rs[0], identityTag), (rs[1], gzipTag)] {
                #expect(r.status == 304)
                #expect(r.header("ETag") == tag)
                #expect(r.header("Vary") == Self.negotiatedVary)
                #expect(r.header("Content-Language") == "zh-Hant")
                #expect(r.header("Cache-Control") == Self.manifestCacheControl)
                #expect(r.has("Last-Modified") && r.has("Date"))
                #expect(r.body.isEmpty)
            }
            #expect(rs[2].status == 200 && rs[2].text.hasPrefix("ok version"), "bytes after a 304: \(rs[2])")

            // The tag of another locale does not validate this one: a different language, a 200.
            let other = try get(Self.negotiated, [("Accept-Language", "zh-CN"), ("If-None-Match", identityTag)])
            #expect(other.status == 200)
            #expect(other.header("Content-Language") == "zh-Hans")
            // If-Match with the negotiated tag proceeds; with another locale's tag, 412.
            #expect(try get(Self.negotiated, [("Accept-Language", "zh-HK"), ("If-Match", identityTag)]).status == 200)
            #expect(try get(Self.negotiated, [("Accept-Language", "fr"), ("If-Match", identityTag)]).status == 412)
            // The explicit URL validates with the same tag.
            #expect(try get("/content/catalogs/zh-Hant/Localizable.plist", [("If-None-Match", identityTag)]).status == 304)
        }

        @Test("ranges: 206 of the negotiated locale with Content-Language and Vary")
        func range() throws {
            let body = CatalogFixture.catalog("fr", table: "Localizable")
            let r = try get(Self.negotiated, [("Accept-Language", "fr-CA"), ("Range", "bytes=0-15")])
            #expect(r.status == 206)
            #expect(r.header("Content-Range") == "bytes 0-15/\(body.count)")
            #expect(r.body == Array(body[0...15]))
            #expect(r.header("Content-Language") == "fr")
            #expect(r.header("Vary") == Self.negotiatedVary)
            let bad = try get(Self.negotiated, [("Accept-Language", "fr"), ("Range", "bytes=999999-")])
            #expect(bad.status == 416)
            #expect(bad.header("Vary") == Self.negotiatedVary)
        }

        @Test("HEAD: the GET head without a body", .http1Only)
        func head() throws {
            let viaGet = try get(Self.negotiated, [("Accept-Language", "pt-AO")])
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            try c.send(
                RawHTTPConnection.head("HEAD", Self.negotiated, headers: [("Accept-Language", "pt-AO")])
                    + RawHTTPConnection.head("HEAD", "/content/catalogs/Nope.plist")
                    + RawHTTPConnection.head("GET", "/healthz"))
            let rs = try c.readResponses(["HEAD", "HEAD", "GET"])
            #expect(rs[0].status == 200)
            #expect(rs[0].body.isEmpty)
            #expect(rs[0].stableHeaders == viaGet.stableHeaders)
            #expect(rs[0].header("Content-Language") == "pt-PT")
            #expect(rs[1].status == 404)
            #expect(rs[2].status == 200 && rs[2].text.hasPrefix("ok version"), "bytes after HEAD: \(rs[2])")
        }

        @Test("explicit locale URLs: canonical or not, with Content-Language; unknown ones 404")
        func explicitLocales() throws {
            let spellings: [(String, String)] = [
                ("pt-BR", "pt-BR"), ("pt_BR", "pt-BR"), ("pt-br", "pt-BR"), ("PT_br", "pt-BR"), ("pt_BR.UTF-8", "pt-BR"),
                ("zh-Hant", "zh-Hant"), ("zh_Hant", "zh-Hant"), ("zh-hant", "zh-Hant"), ("ZH_HANT", "zh-Hant"),
                ("es-419", "es-419"), ("ES_419", "es-419"), ("EN", "en"), ("zh_Hant@euro", "zh-Hant"), ("pt-BR-u-ca-gregory", "pt-BR"),
            ]
            for (spelling, canonical) in spellings {
                let r = try get("/content/catalogs/\(spelling)/Localizable.plist", [("Accept-Language", "fr")])
                #expect(r.status == 200, "\(spelling)")
                #expect(r.header("Content-Language") == canonical, "\(spelling)")
                #expect(r.header("Vary") == "Accept-Encoding", "\(spelling)")
                #expect(r.body == CatalogFixture.catalog(canonical, table: "Localizable"), "\(spelling)")
                let sha = try entry(canonical).sha256
                #expect(r.header("ETag") == "\"\(sha)\"", "\(spelling)")
            }
            // Percent-encoded spellings decode first.
            #expect(try get("/content/catalogs/pt%5FBR/Localizable.plist").header("Content-Language") == "pt-BR")
            for target in [
                "/content/catalogs/ja/Localizable.plist", "/content/catalogs/xx_YY/Localizable.plist",
                "/content/catalogs/es-MX/Localizable.plist", "/content/catalogs/zh/Localizable.plist",
                "/content/catalogs/pt_BR/Nope.plist", "/content/catalogs/pt_BR/InfoPlist.plist",
                "/content/catalogs/not%20a%20locale/Localizable.plist", "/content/catalogs/pt_BR",
                "/content/catalogs/pt_BR/x/Localizable.plist", "/content/catalogs//Localizable.plist",
                "/content/catalogs/C/Localizable.plist",
            ] {
                #expect(try get(target).status == 404, "\(target)")
            }
        }

        @Test("a table with no catalogs is 404; other entries are unchanged")
        func unknownTableAndOthers() throws {
            let headerSets: [[(String, String)]] = [[], [("Accept-Language", "en")], [("Accept-Language", "*")]]
            for headers in headerSets {
                let r = try get("/content/catalogs/Nope.plist", headers)
                #expect(r.status == 404)
                #expect(r.header("Content-Language") == nil)
            }
            #expect(try get("/content/catalogs/.plist").status == 404)
            #expect(try get("/content/catalogs/").status == 404)
            // The index is an ordinary entry (no locale).
            let index = try get("/content/catalogs/index.plist", [("Accept-Language", "fr")])
            #expect(index.status == 200)
            #expect(index.body == CatalogFixture.index(developmentLanguage: "en"))
            #expect(index.header("Content-Language") == nil)
            #expect(index.header("Vary") == "Accept-Encoding")
            // Sonnets and objects do not vary by language.
            let sonnet = try get("/content/sonnets/018.plist", [("Accept-Language", "fr")])
            #expect(sonnet.status == 200)
            #expect(sonnet.header("Content-Language") == nil)
            #expect(sonnet.header("Vary") == "Accept-Encoding")
            let objectPath = try entry("fr").objectPath
            let object = try get("/" + objectPath, [("Accept-Language", "en")])
            #expect(object.status == 200)
            #expect(object.header("Content-Language") == nil)
            #expect(object.header("Vary") == "Accept-Encoding")
            #expect(object.body == CatalogFixture.catalog("fr", table: "Localizable"))
        }

        @Test("406 on a negotiated URL varies on both headers")
        func notAcceptable() throws {
            let r = try get(Self.negotiated, [("Accept-Language", "fr"), ("Accept-Encoding", "identity;q=0")])
            #expect(r.status == 406)
            #expect(r.header("Vary") == Self.negotiatedVary)
        }
    }

    @Suite("folio-edge live: catalog publishes", .serialized)
    struct EdgeLocalePublishTests {
        @Test("a publish swaps the negotiation table with everything else")
        func hotSwap() async throws {
            let fixture = try EdgeFixture.make("edge-locale-swap")
            defer { fixture.cleanup() }
            let v1 = try fixture.manifest().version
            let first = CatalogFixture.standard().filter { !$0.path.hasPrefix("catalogs/de/") && !$0.path.hasSuffix("/InfoPlist.plist") }
            try CatalogFixture.publish(first, into: fixture)
            let edge = try EdgeProcess.start(root: fixture.root, args: ["--watch-interval-ms", "50"])
            defer { edge.stop() }
            let url = "/content/catalogs/Localizable.plist"
            func get(_ language: String?) throws -> EdgeResponse {
                try RawHTTPConnection.fetch(port: edge.port, url, headers: language.map { [("Accept-Language", $0)] } ?? [])
            }
            #expect(try get("de-CH").header("Content-Language") == "en")
            #expect(try get(nil).header("Content-Language") == "en")
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/content/catalogs/InfoPlist.plist").status == 404)

            // Version 2: German added to Localizable, French the development language, es-419 gone.
            var second = CatalogFixture.standard(developmentLanguage: "fr").filter { $0.path != "catalogs/es-419/Localizable.plist" }
            second.append(("catalogs/de/Localizable.plist", "de", CatalogFixture.catalog("de", table: "Localizable", revision: 2)))
            try CatalogFixture.publish(second, into: fixture, version: v1 + 1)
            let took = await edge.waitForVersion(v1 + 1, timeout: 20)
            #expect(took != nil, "the edge did not load version \(v1 + 1): \(edge.log)")
            let de = try get("de-CH")
            #expect(de.header("Content-Language") == "de")
            #expect(de.body == CatalogFixture.catalog("de", table: "Localizable", revision: 2))
            #expect(try get(nil).header("Content-Language") == "fr")
            #expect(try get("es-MX").header("Content-Language") == "es")
            #expect(try get("ja").header("Content-Language") == "fr")
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/content/catalogs/es_419/Localizable.plist").status == 404)
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/content/catalogs/DE/Localizable.plist").status == 200)
            #expect(try RawHTTPConnection.fetch(port: edge.port, "/content/catalogs/InfoPlist.plist", headers: [("Accept-Language", "de")]).header("Content-Language") == "de")

            // Without a readable index: en when available.
            var third = second.filter { $0.path != "catalogs/index.plist" }
            third.append(("catalogs/index.plist", nil, Array("not a plist".utf8)))
            try CatalogFixture.publish(third, into: fixture, version: v1 + 2)
            #expect(await edge.waitForVersion(v1 + 2, timeout: 20) != nil)
            #expect(try get(nil).header("Content-Language") == "en")
            #expect(edge.isAlive)
        }
    }
}
