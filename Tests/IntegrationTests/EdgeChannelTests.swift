import FolioPlist
import FolioPublished
import FolioSupport
import FolioTestSupport
import FolioToolSupport
import Foundation
import Testing

extension EdgeIntegration {
    /// Release channels served by the real `folio-edge`, as an origin and through a cache tier:
    /// a root built by hand with production, a beta channel and a release of beta's own.
    @Suite("folio-edge live: release channels", .serialized)
    struct EdgeChannelTests {
        /// A published root: objects by hash, production at the root, channels under `channels/`.
        struct Root {
            let fixture = ChannelRootFixture()
            var dir: String { fixture.root }

            /// Writes `text` as the object of `path` (and a gzip variant with `gzip`); returns its entry.
            func object(_ path: String, _ text: String, gzip: Bool = false) throws -> Manifest.Entry {
                try fixture.object(path, text, gzip: gzip)
            }

            /// Publishes version `version` of `channel` as the builder does (versioned copy and
            /// head first, `manifest.plist` last, by rename); returns the manifest's bytes.
            @discardableResult
            func publish(_ version: Int, channel: String = Channel.production, _ entries: [Manifest.Entry], releases: [Release] = []) throws -> [UInt8] {
                let m = ChannelRootFixture.manifest(
                    version, channel: channel == Channel.production ? nil : channel, entries: entries, releases: releases)
                return try fixture.publish(m, channel: channel)
            }

            /// The object file of `entry`.
            func bytes(_ entry: Manifest.Entry) throws -> [UInt8] { try FileIO.read(dir + "/" + entry.objectPath) }
        }

        /// Production v1 (one entry), beta v1 (that entry, one of its own, and a 10% release
        /// changing the shared path to an object nothing else names).
        struct Published {
            let root = Root()
            let shared: Manifest.Entry
            let betaOnly: Manifest.Entry
            let releaseOnly: Manifest.Entry
            let production: [UInt8]
            let beta: [UInt8]

            init() throws {
                shared = try root.object("notes/shared.txt", "shared by every channel\n")
                betaOnly = try root.object("notes/beta.txt", "only in beta's defaults, long enough to be worth compressing. " + String(repeating: "beta ", count: 40), gzip: true)
                releaseOnly = try root.object("notes/shared.txt", "only in beta's 10% release\n")
                production = try root.publish(1, [shared])
                beta = try root.publish(1, channel: "beta", [shared, betaOnly], releases: [Release(id: 1, rolloutBasisPoints: 1000, entries: [releaseOnly])])
            }

            /// Removes the root.
            func cleanup() { Harness.cleanup(root.dir) }
        }

        /// GET `target` on a fresh connection.
        static func get(_ port: Int, _ target: String, _ headers: [(String, String)] = []) throws -> EdgeResponse {
            try RawHTTPConnection.fetch(port: port, target, headers: headers)
        }

        /// `folio_edge_manifest_requests_total{channel="NAME"}` in a metrics text.
        static func fetches(_ channel: String, in text: String) -> Double? {
            EdgeProcess.metric("folio_edge_manifest_requests_total{channel=\"\(channel)\"}", in: text)
        }

        /// Polls `target` until its body is `bytes`; true when it is within `timeout` seconds.
        static func waitForBody(_ port: Int, _ target: String, _ bytes: [UInt8], timeout: Double = 5) async -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if (try? get(port, target).body) == bytes { return true }
                try? await Task.sleep(for: .milliseconds(25))
            }
            return false
        }

        @Test("beta's manifest, head and objects (its release's too) are served; an unknown channel is 404; fetches counted by channel")
        func serving() throws {
            let p = try Published()
            defer { p.cleanup() }
            let edge = try EdgeProcess.start(root: p.root.dir)
            defer { edge.stop() }

            let manifest = try Self.get(edge.port, "/channels/beta/manifest.plist")
            #expect(manifest.status == 200)
            #expect(manifest.body == p.beta)
            #expect(manifest.header("Cache-Control") == Manifest.defaultCacheHints["manifest"]!.cacheControl)
            #expect(manifest.header("Cache-Control") == (try Self.get(edge.port, "/manifest.plist")).header("Cache-Control"))
            let etag = try #require(manifest.header("ETag"))
            #expect(try Self.get(edge.port, "/channels/beta/manifest.plist", [("If-None-Match", etag)]).status == 304)
            #expect(try Self.get(edge.port, "/channels/beta/head.plist").status == 200)
            #expect(try Self.get(edge.port, "/channels/beta/manifest.json").status == 200)
            let versioned = try Self.get(edge.port, "/channels/beta/manifests/1.plist")
            #expect(versioned.status == 200 && versioned.body == p.beta)
            #expect(versioned.header("Cache-Control") == Manifest.defaultCacheHints["object"]!.cacheControl)

            for entry in [p.releaseOnly, p.betaOnly, p.shared] {
                let object = try Self.get(edge.port, "/" + entry.objectPath)
                #expect(object.status == 200, "\(entry.objectPath)")
                #expect(object.body == (try p.root.bytes(entry)))
                #expect(object.header("ETag") == "\"\(entry.sha256)\"")
            }
            #expect(try Self.get(edge.port, "/" + p.betaOnly.objectPath, [("Accept-Encoding", "gzip")]).header("Content-Encoding") == "gzip")
            // Logical paths are production's default entries only.
            #expect(try Self.get(edge.port, "/content/notes/shared.txt").body == (try p.root.bytes(p.shared)))
            #expect(try Self.get(edge.port, "/content/notes/beta.txt").status == 404)
            #expect(try Self.get(edge.port, "/channels/nope/manifest.plist").status == 404)
            #expect(try Self.get(edge.port, "/channels/nope/head.plist").status == 404)

            let metrics = try Self.get(edge.port, "/metrics").text
            #expect(Self.fetches("beta", in: metrics) == 3, "200, 304 and the head: \(metrics)")
            #expect(Self.fetches("production", in: metrics) == 1)
            #expect(Self.fetches("other", in: metrics) == 0)
            #expect(Self.fetches("nope", in: metrics) == nil, "a channel the edge does not serve gets no counter")
        }

        @Test("a publish into beta is picked up by the watcher; a broken one is refused alone while production publishes")
        func publishing() async throws {
            let p = try Published()
            defer { p.cleanup() }
            let edge = try EdgeProcess.start(root: p.root.dir, args: ["--watch-interval-ms", "100"])
            defer { edge.stop() }
            #expect(try Self.get(edge.port, "/channels/beta/manifest.plist").body == p.beta)

            let next = try p.root.object("notes/beta.txt", "beta, version 2\n")
            let v2 = try p.root.publish(2, channel: "beta", [p.shared, next])
            #expect(await Self.waitForBody(edge.port, "/channels/beta/manifest.plist", v2), "log: \(edge.log)")
            #expect(try Self.get(edge.port, "/" + next.objectPath).body == (try p.root.bytes(next)))
            #expect(try Self.get(edge.port, "/channels/beta/manifests/2.plist").body == v2)
            #expect(try Self.get(edge.port, "/" + p.releaseOnly.objectPath).status == 200, "the replaced version's objects stay servable")
            #expect(try edge.health() == "ok version 1\n")

            // Beta version 3 names an object that is not there: refused, beta stays at 2.
            let missing = try p.root.object("notes/gone.txt", "never published\n")
            try FileManager.default.removeItem(atPath: p.root.dir + "/" + missing.objectPath)
            try p.root.publish(3, channel: "beta", [missing])
            #expect(await edge.waitForLog("rejected channel publish", timeout: 5), "log: \(edge.log)")
            #expect(try Self.get(edge.port, "/channels/beta/manifest.plist").body == v2)
            #expect(try edge.metric("folio_edge_reload_failures_total") == 1)

            // Production publishes meanwhile.
            let prod2 = try p.root.publish(2, [p.shared, next])
            #expect(await edge.waitForVersion(2, timeout: 5) != nil, "log: \(edge.log)")
            #expect(try Self.get(edge.port, "/manifest.plist").body == prod2)
            #expect(try Self.get(edge.port, "/content/notes/beta.txt").body == (try p.root.bytes(next)))
            #expect(try Self.get(edge.port, "/channels/beta/manifest.plist").body == v2)
            #expect(!edge.log.contains("rejected publish"), "production was never refused: \(edge.log)")
            #expect(edge.isAlive)
        }

        @Test("through a cache tier: beta's manifest, its release's objects prefetched from the root, fetches counted by channel")
        func throughTier() throws {
            let p = try Published()
            defer { p.cleanup() }
            let origin = try EdgeProcess.start(root: p.root.dir)
            defer { origin.stop() }
            let tier = try EdgeProcess.start(root: p.root.dir, args: ["--origin", origin.baseURL, "--threads", "1"])
            defer { tier.stop() }

            let encoding = [("Accept-Encoding", "br, gzip")]
            let manifest = try Self.get(tier.port, "/channels/beta/manifest.plist", encoding)
            #expect(manifest.status == 200)
            let body = manifest.header("Content-Encoding") == "gzip" ? try Gzip.decompress(manifest.body, maxSize: 1 << 20)
                : manifest.header("Content-Encoding") == "br" ? try Brotli.decompress(manifest.body, maxSize: 1 << 20) : manifest.body
            #expect(body == p.beta)
            // The manifest was served once its objects (every release's) were in the cache.
            let cachedOnly = encoding + [("Cache-Control", "only-if-cached")]
            for entry in [p.releaseOnly, p.shared] {
                let object = try Self.get(tier.port, "/" + entry.objectPath, cachedOnly)
                #expect(object.status == 200, "\(entry.objectPath) was not prefetched: \(object.status)")
                #expect(object.body == (try p.root.bytes(entry)))
            }
            #expect(try Self.get(tier.port, "/channels/beta/head.plist").status == 200)
            #expect(try Self.get(tier.port, "/channels/nope/manifest.plist").status == 404)

            let metrics = try Self.get(tier.port, "/.folio/metrics").text
            #expect(Self.fetches("beta", in: metrics) == 2, "\(metrics)")
            #expect(Self.fetches("production", in: metrics) == 0)
            #expect(Self.fetches("nope", in: metrics) == nil)
        }
    }
}
