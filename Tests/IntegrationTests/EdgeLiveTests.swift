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

extension EdgeIntegration {
    /// HTTP semantics of the real folio-edge, against one edge serving one published fixture.
    @Suite("folio-edge live: HTTP semantics", .serialized, .sharedEdge("edge-live"))
    struct EdgeLiveTests {
        let ctx: SharedEdgeContext
        let entry: Manifest.Entry
        let object: [UInt8]

        static let objectCacheControl = "public, max-age=31536000, immutable"
        static let manifestCacheControl = "public, max-age=60, stale-while-revalidate=300, stale-if-error=86400"

        init() throws {
            ctx = try SharedEdge.current()
            entry = try #require(ctx.manifest.entry("sonnets/018.plist"))
            object = try ctx.fixture.bytes(entry.objectPath)
        }

        var port: Int { ctx.edge.port }
        var objectURL: String { "/" + entry.objectPath }

        func get(_ target: String, _ headers: [(String, String)] = []) throws -> EdgeResponse {
            try RawHTTPConnection.fetch(port: port, target, headers: headers)
        }

        @Test("GET with Accept-Encoding: gzip serves the precompressed variant (curl)")
        func gzipVariant() throws {
            let gzipSize = try #require(entry.gzipSize, "sonnet 18 should have a gzip variant")
            let r = try EdgeCurl.get(ctx.edge.baseURL + objectURL, headers: ["Accept-Encoding: gzip"])
            #expect(r.status == 200)
            #expect(r.header("Content-Encoding") == "gzip")
            #expect(r.header("Vary") == "Accept-Encoding")
            #expect(r.header("Cache-Control") == Self.objectCacheControl)
            #expect(r.header("Content-Type") == "application/x-plist")
            #expect(r.header("Content-Length") == String(gzipSize))
            #expect(r.body.count == gzipSize)
            #expect(r.body == (try ctx.fixture.bytes(entry.objectPath + ".gz")))
            let etag = try #require(r.header("ETag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""), "a strong ETag, not \(etag)")
            let inflated = try Gzip.decompress(r.body, maxSize: entry.size)
            #expect(inflated == object)
            #expect(ContentHash.sha256Hex(inflated) == entry.sha256)

            // The raw client sees the same response.
            let raw = try get(objectURL, [("Accept-Encoding", "gzip")])
            #expect(raw.status == 200)
            #expect(raw.body == r.body)
            #expect(raw.header("ETag") == etag)
        }

        @Test("brotli: preferred on a tie, its own strong ETag and 304, Range over its bytes; curl --compressed decodes it")
        func brotliVariant() throws {
            let brSize = try #require(entry.brSize, "sonnet 18 should have a brotli variant")
            let br = try get(objectURL, [("Accept-Encoding", "gzip, deflate, br")])
            #expect(br.status == 200)
            #expect(br.header("Content-Encoding") == "br")
            #expect(br.header("Vary") == "Accept-Encoding")
            #expect(br.header("Content-Length") == String(brSize))
            #expect(br.body == (try ctx.fixture.bytes(entry.objectPath + ".br")))
            #expect(try Brotli.decompress(br.body, maxSize: entry.size) == object)
            let tag = try #require(br.header("ETag"))
            let gzip = try get(objectURL, [("Accept-Encoding", "gzip")])
            #expect(tag != gzip.header("ETag") && tag != "\"\(entry.sha256)\"", "one strong ETag per encoding")
            // q-values decide; a tie goes to brotli.
            #expect(try get(objectURL, [("Accept-Encoding", "br;q=0.5, gzip;q=0.5, identity;q=0.5")]).header("Content-Encoding") == "br")
            #expect(try get(objectURL, [("Accept-Encoding", "br;q=0.4, gzip;q=0.5, identity;q=0.1")]).header("Content-Encoding") == "gzip")
            // Validators: its tag revalidates it, and only it.
            let nm = try get(objectURL, [("Accept-Encoding", "br"), ("If-None-Match", tag)])
            #expect(nm.status == 304)
            #expect(nm.header("ETag") == tag)
            #expect(try get(objectURL, [("Accept-Encoding", "gzip"), ("If-None-Match", tag)]).status == 200)
            // A range is of the encoded bytes (RFC 9110 §14.1.2).
            let part = try get(objectURL, [("Accept-Encoding", "br"), ("Range", "bytes=0-9")])
            #expect(part.status == 206)
            #expect(part.header("Content-Encoding") == "br")
            #expect(part.body == Array(br.body[0..<10]))
            // A real decoder: curl asks for every coding it has and decodes what it gets.
            let url = ctx.edge.baseURL
            let curl = try EdgeCurl.request(url + objectURL, options: EdgeCurl.stackOptions(url) + ["--compressed"], headers: []).response
            #expect(curl.header("Content-Encoding") == "br")
            #expect(curl.body == object)
            let manifest = try EdgeCurl.request(url + "/manifest.plist", options: EdgeCurl.stackOptions(url) + ["--compressed"], headers: []).response
            #expect(manifest.header("Content-Encoding") == "br")
            #expect(manifest.body == (try ctx.fixture.bytes("manifest.plist")))
        }

        @Test("without Accept-Encoding the identity bytes are served, with their own strong ETag")
        func identityVariant() throws {
            let identity = try get(objectURL)
            let gzip = try get(objectURL, [("Accept-Encoding", "gzip")])
            #expect(identity.status == 200)
            #expect(identity.header("Content-Encoding") == nil)
            #expect(identity.body == object)
            #expect(identity.header("Content-Length") == String(entry.size))
            #expect(identity.header("Vary") == "Accept-Encoding")
            #expect(identity.header("Cache-Control") == Self.objectCacheControl)
            #expect(identity.header("ETag") == "\"\(entry.sha256)\"")
            #expect(identity.header("ETag") != nil && gzip.header("ETag") != nil)
            #expect(identity.header("ETag") != gzip.header("ETag"))
            #expect(identity.header("Last-Modified") != nil)

            // Negotiation: explicit identity, gzip refused, a wildcard, an unknown coding.
            #expect(try get(objectURL, [("Accept-Encoding", "identity")]).header("Content-Encoding") == nil)
            #expect(try get(objectURL, [("Accept-Encoding", "gzip;q=0")]).body == object)
            #expect(try get(objectURL, [("Accept-Encoding", "*")]).header("Content-Encoding") == "br")
            #expect(try get(objectURL, [("Accept-Encoding", "zstd")]).body == object)
            #expect(try get(objectURL, [("Accept-Encoding", "gzip;q=0.5, identity;q=1")]).header("Content-Encoding") == nil)
        }

        @Test("conditional requests: 304 with validators and no body, lists, W/, If-Match → 412")
        func conditionalRequests() throws {
            let gzip = try get(objectURL, [("Accept-Encoding", "gzip")])
            let gzipTag = try #require(gzip.header("ETag"))
            let identityTag = "\"\(entry.sha256)\""

            let nm = try get(objectURL, [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTag)])
            #expect(nm.status == 304)
            #expect(nm.header("ETag") == gzipTag)
            #expect(nm.header("Cache-Control") == Self.objectCacheControl)
            #expect(nm.header("Vary") == "Accept-Encoding")
            #expect(nm.has("Date"))
            #expect(nm.header("Last-Modified") == gzip.header("Last-Modified"))
            #expect(nm.body.isEmpty)
            if TestStack.current == .http1 {
                // A 304 followed by a pipelined request: the second response parses, so no body was sent.
                let c = try RawHTTPConnection(port: port)
                defer { c.close() }
                try c.send(
                    RawHTTPConnection.head("GET", objectURL, headers: [("Accept-Encoding", "gzip"), ("If-None-Match", gzipTag)])
                        + RawHTTPConnection.head("GET", "/healthz"))
                let rs = try c.readResponses(["GET", "GET"])
                #expect(rs[0].status == 304 && rs[0].body.isEmpty)
                #expect(rs[1].status == 200 && rs[1].text == "ok version \(ctx.manifest.version)\n", "bytes after a 304: \(rs[1])")
            }

            // The curl view of the same 304.
            let viaCurl = try EdgeCurl.get(ctx.edge.baseURL + objectURL, headers: ["Accept-Encoding: gzip", "If-None-Match: \(gzipTag)"])
            #expect(viaCurl.status == 304)
            #expect(viaCurl.body.isEmpty)

            // A list with a weak form of the tag (If-None-Match compares weakly).
            let list = try get(objectURL, [("If-None-Match", "\"0000\", W/\(identityTag)")])
            #expect(list.status == 304)
            #expect(list.header("ETag") == identityTag)
            let gzList = try get(objectURL, [("Accept-Encoding", "gzip"), ("If-None-Match", "\"x\",W/\(gzipTag) , \"y\"")])
            #expect(gzList.status == 304)
            #expect(try get(objectURL, [("If-None-Match", "*")]).status == 304)
            // The identity tag does not validate the gzip representation, and vice versa.
            #expect(try get(objectURL, [("Accept-Encoding", "gzip"), ("If-None-Match", identityTag)]).status == 200)
            #expect(try get(objectURL, [("If-None-Match", gzipTag)]).status == 200)

            // If-Match: a mismatch fails; a match proceeds; a weak tag never matches strongly.
            let failed = try get(objectURL, [("If-Match", "\"not-the-tag\"")])
            #expect(failed.status == 412)
            #expect(try get(objectURL, [("If-Match", identityTag)]).status == 200)
            #expect(try get(objectURL, [("If-Match", "W/\(identityTag)")]).status == 412)

            // If-Modified-Since applies only without If-None-Match.
            let lastModified = try #require(gzip.header("Last-Modified"))
            #expect(try get(objectURL, [("If-Modified-Since", lastModified)]).status == 304)
            #expect(try get(objectURL, [("If-None-Match", "\"other\""), ("If-Modified-Since", lastModified)]).status == 200)
        }

        @Test("HEAD answers the same headers as GET and no body")
        func head() throws {
            for target in [objectURL, "/content/sonnets/018.plist", "/manifest.plist", "/manifest.json", "/healthz"] {
                for headers in [[], [("Accept-Encoding", "gzip")]] {
                    let g = try get(target, headers)
                    let h = try RawHTTPConnection.fetch(port: port, "HEAD", target, headers: headers)
                    #expect(g.status == 200)
                    #expect(h.status == 200)
                    #expect(h.stableHeaders == g.stableHeaders, "\(target) \(headers)")
                    #expect(h.has("Date"))
                }
            }
            // HEAD then GET pipelined: the second response starts right after the first head.
            guard TestStack.current == .http1 else { return }
            let c = try RawHTTPConnection(port: port)
            defer { c.close() }
            try c.send(RawHTTPConnection.head("HEAD", objectURL) + RawHTTPConnection.head("GET", objectURL))
            let rs = try c.readResponses(["HEAD", "GET"])
            #expect(rs[0].status == 200 && rs[0].body.isEmpty)
            #expect(rs[0].header("Content-Length") == String(entry.size))
            #expect(rs[1].status == 200 && rs[1].body == object)
        }

        @Test("/content/<path> serves the entry's object with the manifest's short Cache-Control")
        func logicalPath() throws {
            for headers in [[], [("Accept-Encoding", "gzip")]] {
                let o = try get(objectURL, headers)
                let c = try get("/content/sonnets/018.plist", headers)
                #expect(c.status == 200)
                #expect(c.body == o.body)
                #expect(c.header("ETag") == o.header("ETag"))
                #expect(c.header("Content-Encoding") == o.header("Content-Encoding"))
                #expect(c.header("Vary") == "Accept-Encoding")
                let cc = try #require(c.header("Cache-Control"))
                #expect(cc.contains("max-age=60"))
                #expect(cc.contains("stale-while-revalidate="))
                #expect(cc.contains("stale-if-error="))
                #expect(!cc.contains("immutable"))
                #expect(o.header("Cache-Control") == Self.objectCacheControl)
            }
            let identity = try get("/content/sonnets/018.plist")
            #expect(identity.body == object)
            #expect(identity.header("Cache-Control") == Self.manifestCacheControl)
            let nm = try get("/content/sonnets/018.plist", [("If-None-Match", "\"\(entry.sha256)\"")])
            #expect(nm.status == 304)
            #expect(nm.header("Cache-Control") == Self.manifestCacheControl)
            #expect(try get("/content/sonnets/155.plist").status == 404)
            // Another entry maps to its own object.
            let other = try #require(ctx.manifest.entry("sonnets/index.plist"))
            #expect(try get("/content/sonnets/index.plist").body == (try ctx.fixture.bytes(other.objectPath)))
        }

        @Test("/manifest.plist, /manifest.json and /manifests/<v>.plist")
        func manifests() throws {
            let onDisk = try ctx.fixture.bytes("manifest.plist")
            let m = try get("/manifest.plist")
            #expect(m.status == 200)
            #expect(m.body == onDisk)
            #expect(m.header("ETag") == "\"\(ContentHash.sha256Hex(onDisk))\"")
            #expect(m.header("Cache-Control") == Self.manifestCacheControl)
            #expect(m.header("Content-Type") == "application/x-plist")
            let gz = try get("/manifest.plist", [("Accept-Encoding", "gzip")])
            #expect(gz.status == 200)
            if gz.header("Content-Encoding") == "gzip" {
                #expect(try Gzip.decompress(gz.body, maxSize: 1 << 24) == onDisk)
                #expect(gz.header("ETag") != m.header("ETag"))
            }

            let json = try get("/manifest.json")
            #expect(json.status == 200)
            #expect(json.header("Content-Type")?.hasPrefix("application/json") == true)
            let decoded = try JSONPlist.decode(json.body)
            #expect(decoded["version"] == .int(Int64(ctx.manifest.version)))
            #expect(decoded["entries"]?.arrayValue?.count == ctx.manifest.entries.count)

            let v = ctx.manifest.version
            let versioned = try get("/manifests/\(v).plist")
            #expect(versioned.status == 200)
            #expect(versioned.body == (try ctx.fixture.bytes("manifests/\(v).plist")))
            #expect(versioned.header("Cache-Control") == Self.objectCacheControl)
            #expect(try get("/manifests/\(v + 1).plist").status == 404)
        }

        @Test("Range: 206 with Content-Range, If-Range, suffix ranges, 416 with bytes */LEN")
        func ranges() throws {
            let len = entry.size
            let r = try get(objectURL, [("Range", "bytes=0-9")])
            #expect(r.status == 206)
            #expect(r.header("Content-Range") == "bytes 0-9/\(len)")
            #expect(r.header("Content-Length") == "10")
            #expect(r.body == Array(object[0..<10]))
            #expect(r.header("ETag") == "\"\(entry.sha256)\"")

            let wrong = try get(objectURL, [("Range", "bytes=0-9"), ("If-Range", "\"wrong\"")])
            #expect(wrong.status == 200)
            #expect(wrong.body == object)
            let right = try get(objectURL, [("Range", "bytes=0-9"), ("If-Range", "\"\(entry.sha256)\"")])
            #expect(right.status == 206)
            #expect(right.body.count == 10)

            let suffix = try get(objectURL, [("Range", "bytes=-5")])
            #expect(suffix.status == 206)
            #expect(suffix.header("Content-Range") == "bytes \(len - 5)-\(len - 1)/\(len)")
            #expect(suffix.body == Array(object[(len - 5)...]))
            let open = try get(objectURL, [("Range", "bytes=10-")])
            #expect(open.status == 206)
            #expect(open.body == Array(object[10...]))

            let unsatisfiable = try get(objectURL, [("Range", "bytes=\(len)-")])
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.header("Content-Range") == "bytes */\(len)")
        }

        @Test("unknown paths and traversal attempts are 404; other methods 405; nothing acceptable 406", .http1Only)
        func errors() throws {
            #expect(try get("/nope").status == 404)
            #expect(try get("/objects/\(String(repeating: "0", count: 64)).plist").status == 404)
            #expect(try get("/public/manifest.plist").status == 404)
            let traversals = [
                "/objects/../manifest.plist",
                "/objects/%2e%2e/manifest.plist",
                "/objects/%2E%2E%2Fmanifest.plist",
                "/content/..%2fmanifest.plist",
                "/content/sonnets/../../manifest.plist",
                "/content/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
                "/objects/..%2f..%2f..%2f..%2fetc%2fpasswd",
                "/objects/" + entry.sha256 + ".plist/..",
            ]
            for t in traversals {
                let r = try get(t)
                #expect(r.status == 404, "\(t) → \(r.status)")
                #expect(!r.body.starts(with: Array("bplist00".utf8)))
                #expect(!r.text.contains("root:"))
            }
            // curl normalises dot segments unless told not to.
            let curled = try EdgeCurl.get(ctx.edge.baseURL + "/objects/%2e%2e/manifest.plist")
            #expect(curled.status == 404)

            for method in ["POST", "PUT", "DELETE"] {
                let c = try RawHTTPConnection(port: port)
                defer { c.close() }
                let r = try c.request(method, "/manifest.plist", headers: [("Content-Length", "0")])
                #expect(r.status == 405, "\(method)")
                #expect(r.header("Allow") == "GET, HEAD")
                #expect(c.waitForClose(timeout: 3), "the connection ends after a 405")
            }

            let none = try get(objectURL, [("Accept-Encoding", "identity;q=0, gzip;q=0")])
            #expect(none.status == 406)
            #expect(none.header("Vary") == "Accept-Encoding")
            #expect(try get(objectURL, [("Accept-Encoding", "*;q=0")]).status == 406)
        }

        @Test("/healthz shows the version and /metrics counts requests")
        func healthAndMetrics() throws {
            let h = try get("/healthz")
            #expect(h.status == 200)
            #expect(h.text == "ok version \(ctx.manifest.version)\n")
            #expect(h.header("Cache-Control") == "no-store")

            let sample = "folio_edge_requests_total{status=\"404\"}"
            let before = try #require(try ctx.edge.metric(sample))
            for _ in 0..<3 { _ = try get("/does-not-exist") }
            let metrics = try get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
            #expect(metrics.text.contains("folio_edge_requests_total"))
            #expect(metrics.text.contains("folio_edge_loaded_version"))
            #expect(EdgeProcess.metric("folio_edge_loaded_version", in: metrics.text) == Double(ctx.manifest.version))
            #expect(EdgeProcess.metric(sample, in: metrics.text) == before + 3)
            let ok = EdgeProcess.metric("folio_edge_requests_total{status=\"200\"}", in: metrics.text)
            #expect((ok ?? 0) >= 1)
        }

        @Test("over the memory budget, objects are served from disk with the same bytes and headers", .http1Only)
        func fromDisk() async throws {
            let disk = try EdgeProcess.start(root: ctx.fixture.root, args: ["--memory-budget", "0"])
            defer { disk.stop() }
            for headers in [[], [("Accept-Encoding", "gzip")]] {
                let a = try get(objectURL, headers)
                let b = try RawHTTPConnection.fetch(port: disk.port, objectURL, headers: headers)
                #expect(b.status == 200)
                #expect(b.body == a.body)
                #expect(b.stableHeaders == a.stableHeaders)
            }
            let r = try RawHTTPConnection.fetch(port: disk.port, objectURL, headers: [("Range", "bytes=0-9")])
            #expect(r.status == 206)
            #expect(r.body == Array(object[0..<10]))
            // Pipelined requests answered from disk stay in order.
            let c = try RawHTTPConnection(port: disk.port)
            defer { c.close() }
            let index = try #require(ctx.manifest.entry("sonnets/index.plist"))
            try c.send(
                RawHTTPConnection.head("GET", objectURL) + RawHTTPConnection.head("HEAD", objectURL)
                    + RawHTTPConnection.head("GET", "/content/sonnets/index.plist", headers: [("Accept-Encoding", "gzip")])
                    + RawHTTPConnection.head("GET", "/healthz"))
            let rs = try c.readResponses(["GET", "HEAD", "GET", "GET"])
            #expect(rs.map(\.status) == [200, 200, 200, 200])
            #expect(rs[0].body == object)
            #expect(rs[1].body.isEmpty)
            let indexBody = rs[2].header("Content-Encoding") == "gzip" ? try Gzip.decompress(rs[2].body, maxSize: 1 << 24) : rs[2].body
            #expect(ContentHash.sha256Hex(indexBody) == index.sha256)
            #expect(rs[3].text == "ok version \(ctx.manifest.version)\n")
            #expect(disk.isAlive)
        }

        @Test("Cache-Control comes from the manifest's hints; each override option replaces only its directive")
        func cacheHintOverrides() throws {
            // A copy of the published root whose manifest carries its own (non-default) hints.
            let dir = Harness.tempDir("edge-hints")
            defer { Harness.cleanup(dir) }
            let root = dir + "/public"
            try FileManager.default.copyItem(atPath: ctx.fixture.root, toPath: root)
            guard case .dict(var plist) = try BinaryPlist.decode(try FileIO.read(root + "/manifest.plist")) else {
                throw HarnessError("manifest.plist is not a dictionary")
            }
            plist["cacheHints"] = .dict([
                "manifest": .dict(["maxAge": .int(30), "staleWhileRevalidate": .int(40), "staleIfError": .int(50)]),
                "object": .dict(["maxAge": .int(31_536_000), "staleWhileRevalidate": .int(0), "staleIfError": .int(0), "immutable": .bool(true)]),
            ])
            try FileIO.writeAtomically(BinaryPlist.encode(.dict(plist)), to: root + "/manifest.plist")

            func cacheControl(_ args: [String]) throws -> (manifest: String?, content: String?, object: String?) {
                let e = try EdgeProcess.start(root: root, args: args)
                defer { e.stop() }
                return (
                    try RawHTTPConnection.fetch(port: e.port, "/manifest.plist").header("Cache-Control"),
                    try RawHTTPConnection.fetch(port: e.port, "/content/sonnets/018.plist").header("Cache-Control"),
                    try RawHTTPConnection.fetch(port: e.port, objectURL).header("Cache-Control"))
            }
            let own = try cacheControl([])
            #expect(own.manifest == "public, max-age=30, stale-while-revalidate=40, stale-if-error=50")
            #expect(own.content == own.manifest)
            #expect(own.object == Self.objectCacheControl)

            let all = try cacheControl(["--manifest-max-age", "5", "--stale-while-revalidate", "7", "--stale-if-error", "9"])
            #expect(all.manifest == "public, max-age=5, stale-while-revalidate=7, stale-if-error=9")
            #expect(all.content == all.manifest)
            #expect(all.object == Self.objectCacheControl)

            // One option given: the other directives keep the manifest's values ("default: the manifest's hint").
            let one = try cacheControl(["--stale-if-error", "9"])
            #expect(one.manifest == "public, max-age=30, stale-while-revalidate=40, stale-if-error=9")
            #expect(one.content == one.manifest)
        }

        @Test("ETags are strong and content-derived: equal across restarts and byte-identical publishes")
        func stableETags() throws {
            let targets = [objectURL, "/content/sonnets/018.plist", "/manifest.plist", "/manifest.json", "/manifests/1.plist"]
            func validators(_ port: Int) throws -> [String] {
                var out: [String] = []
                for t in targets {
                    for headers in [[], [("Accept-Encoding", "gzip")]] {
                        let r = try RawHTTPConnection.fetch(port: port, t, headers: headers)
                        #expect(r.status == 200)
                        let etag = r.header("ETag") ?? "<none>"
                        #expect(!etag.hasPrefix("W/"))
                        out.append("\(t) \(headers.isEmpty ? "identity" : "gzip") \(etag) \(r.header("Last-Modified") ?? "")")
                    }
                }
                return out
            }
            let reference = try validators(port)

            // The same root, served by an edge started, stopped and started again.
            for _ in 0..<2 {
                let e = try EdgeProcess.start(root: ctx.fixture.root)
                defer { e.stop() }
                #expect(try validators(e.port) == reference)
            }

            // A second, separate publish of the same content, with every file's mtime changed.
            let other = try EdgeFixture.make("edge-etag")
            defer { other.cleanup() }
            #expect(Harness.snapshot(other.root) == Harness.snapshot(ctx.fixture.root))
            var times = [timeval(tv_sec: 1_000_000_000, tv_usec: 0), timeval(tv_sec: 1_000_000_000, tv_usec: 0)]
            for rel in Harness.snapshot(other.root).keys {
                #expect(utimes(other.root + "/" + rel, &times) == 0)
            }
            let e = try EdgeProcess.start(root: other.root)
            defer { e.stop() }
            #expect(try validators(e.port) == reference)
        }
    }
}
