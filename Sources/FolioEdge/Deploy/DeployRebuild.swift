import FolioPlist
import FolioPublished
import FolioSupport
import FolioToolSupport

/// A deploy's plan: the edge rebuilds what it can of each changed channel's new version into
/// the staging, and names what the client must still send. The manifest comes from the delta
/// from the one served (with the objects its edits rebuild), or from a variant sent; an object
/// from the delta or from its brotli or gzip variant sent; its gzip variant, and the brotli one
/// of a large object, at the builder's level (sent after all when the size differs from the
/// manifest's); the mirrors and the versioned manifest from the manifest. Run again once files
/// arrive, it goes on from there.
struct DeployRebuild {
    let staging: DeployStaging
    let needs: DeployNeeds
    /// The site served now: its channels' manifests and the objects it has verified.
    let site: Site

    var root: String { staging.root }

    /// What a run made and lacks, and the changed channels' manifests it has, parsed.
    struct Outcome {
        var planned = DeployPlanned.none
        var manifests: [String: ParsedManifest] = [:]
    }

    /// The deltas the client has are made on another core while the channels' manifests and
    /// objects are made here, all but those from the served manifests: the channels read those
    /// (``fromDelta(_:to:_:)``), so they are made after, when the channels have not made them.
    func run() throws(DeployFailure) -> Outcome {
        let read = Set(needs.changed.compactMap(servedDelta))
        let rebuild = self
        let (others, channels) = Parallel.both(
            { Result { () throws(DeployFailure) in try rebuild.deltas(skipping: read) } }, { Result { () throws(DeployFailure) in try rebuild.channels() } })
        var outcome = try channels.get()
        outcome.planned.add(try others.get())
        for path in read.sorted() { try delta(path, &outcome.planned) }
        return outcome
    }

    /// The path of the delta from the manifest `channel` serves to the new one, when the client has it.
    private func servedDelta(_ channel: String) -> String? {
        guard needs.hasDelta(channel), let from = needs.served[channel], let to = needs.begin.channels[channel]?.sha256 else { return nil }
        return PublishedLayout.channelPrefix(channel) + PublishedLayout.delta(from: from, to: to)
    }

    /// The changed channels' manifests, mirrors and objects.
    private func channels() throws(DeployFailure) -> Outcome {
        var outcome = Outcome()
        for name in needs.changed {
            guard let parsed = try channel(name, &outcome.planned) else { continue }
            outcome.manifests[name] = parsed
        }
        return outcome
    }

    /// One changed channel: its manifest, mirrors and objects; nil when its manifest is still to come.
    private func channel(_ channel: String, _ plan: inout DeployPlanned) throws(DeployFailure) -> ParsedManifest? {
        guard let (bytes, manifest, value) = try manifest(channel, &plan) else { return nil }
        let (derived, gzip) = try derive(channel, bytes, manifest, &plan)
        var seen = Set<String>()
        try objects(manifest.allEntries.filter { !site.serves($0) && seen.insert($0.sha256).inserted }, &plan)
        // The variants are made while the deploy goes on to its commit: its reload takes them.
        // The manifest's brotli one only when the version has none (the whole load makes it).
        let servedJSON = site.channels[channel]?.gzip.json
        let brotli = needs.listed.contains(PublishedLayout.channelPrefix(channel) + PublishedLayout.manifestBrotli) ? nil : bytes
        let variants = derived[PublishedLayout.manifestJSON].map { json in Pending { MirrorVariants(json: json, reusing: servedJSON, manifest: brotli) } }
        return ParsedManifest(bytes: bytes, manifest: manifest, derived: derived, value: value, manifestGzip: gzip, variants: variants)
    }

    // MARK: The manifest

    /// The channel's new `manifest.plist` and the manifest it holds (with the value the bytes
    /// decode to, from a delta): staged, sent as a variant, or rebuilt from the delta; nil, with
    /// the variant to send in `plan.missing`, when none gives it.
    private func manifest(_ channel: String, _ plan: inout DeployPlanned) throws(DeployFailure) -> ([UInt8], Manifest, PlistValue?)? {
        let path = PublishedLayout.channelPrefix(channel) + PublishedLayout.manifest
        let sha = needs.begin.channels[channel]!.sha256
        if let staged = staged(path) {
            guard ContentHash.sha256Hex(staged) == sha else {
                throw DeployFailure(422, "\(path) as sent does not hash to the SHA-256 the deploy's begin gave: deploy again")
            }
            return (staged, try Self.parse(staged, path), nil)
        }
        // The delta first: its edits rebuild the changed objects too.
        if needs.hasDelta(channel), let rebuilt = try fromDelta(channel, to: sha, &plan) {
            try staging.store(path, rebuilt.manifestBytes)
            plan.rebuilt += 1
            return (rebuilt.manifestBytes, rebuilt.manifest, rebuilt.value)
        }
        // The root's variants are the served manifest's.
        if let sent = try decodedVariant(of: path, inRoot: false) {
            guard ContentHash.sha256Hex(sent) == sha else { throw DeployFailure(422, "\(path)'s variant as sent does not hash to the begin's SHA-256: deploy again") }
            try staging.store(path, sent)
            plan.rebuilt += 1
            return (sent, try Self.parse(sent, path), nil)
        }
        guard let whole = needs.manifestWhole(channel) else {
            throw DeployFailure(422, "the deploy names channel \(channel) but lists no \(path): send the whole published directory")
        }
        plan.missing.append(whole)
        plan.final = false
        return nil
    }

    private static func parse(_ bytes: [UInt8], _ path: String) throws(DeployFailure) -> Manifest {
        do { return try Manifest(bytes: bytes) } catch { throw DeployFailure(422, "\(path) as deployed is not a manifest: \(error)") }
    }

    /// What the delta from the served manifest rebuilds, its objects staged; nil when the delta
    /// is not there or does not apply (the manifest is then sent whole).
    private func fromDelta(_ channel: String, to sha: String, _ plan: inout DeployPlanned) throws(DeployFailure) -> DeltaStep? {
        guard let served = site.channels[channel], let from = needs.served[channel],
            let servedBytes = served.versioned[served.manifest.version].map({ Array($0.readableBytesView) }),
            let deltaBytes = try delta(PublishedLayout.channelPrefix(channel) + PublishedLayout.delta(from: from, to: sha), &plan, read: true),
            let bundle = try? DeltaBundle(bytes: deltaBytes),
            let step = try? DeltaStep.apply(
                bundle, to: servedBytes, source: served.manifest, plain: served.manifest, sourceValue: served.value, targetSHA256: sha, object: { entry in
                try? FileIO.read(root + "/" + entry.objectPath)
            })
        else { return nil }
        let paths = Dictionary(step.manifest.allEntries.map { ($0.sha256, $0.objectPath) }, uniquingKeysWith: { a, _ in a })
        for (sha256, bytes) in step.objects {
            guard let path = paths[sha256], !has(path) else { continue }
            // The step matched it to its entry's size and digest.
            try staging.store(path, bytes, made: true)
            plan.rebuilt += 1
            plan.rebuiltObjects += 1
        }
        return step
    }

    /// The channel's mirrors and versioned manifest the client has, made from the manifest; the
    /// brotli and JSON mirrors it made, by name, and the gzip one by chunk.
    private func derive(
        _ channel: String, _ bytes: [UInt8], _ manifest: Manifest, _ plan: inout DeployPlanned
    ) throws(DeployFailure) -> (mirrors: [String: [UInt8]], gzip: GzipChunks?) {
        let prefix = PublishedLayout.channelPrefix(channel)
        let (made, gzip) = try DeployDerived.channelFiles(bytes, manifest, served: served(channel)) { name in
            needs.listed.contains(prefix + name) && !isStaged(prefix + name)
        }
        let versioned = PublishedLayout.versionedManifest(manifest.version)
        for (name, made) in made {
            // The versioned manifest is the manifest's bytes: one file under both names.
            if name == versioned {
                try staging.stageLink(prefix + name, to: prefix + PublishedLayout.manifest, bytes: made)
            } else {
                try staging.store(prefix + name, made)
            }
            plan.rebuilt += 1
        }
        let mirrors = [PublishedLayout.manifestBrotli, PublishedLayout.manifestJSON]
        return (Dictionary(made.filter { mirrors.contains($0.name) }.map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a }), gzip)
    }

    /// What the edge serves of `channel` that the new version's mirrors are made from.
    private func served(_ channel: String) -> DeployDerived.Served? {
        guard let served = site.channels[channel],
            let body = served.routes["/" + PublishedLayout.channelPrefix(channel) + PublishedLayout.manifestJSON]?.identity.body
        else { return nil }
        return DeployDerived.Served(json: Array(body.readableBytesView), manifest: served.manifest, manifestGzip: served.gzip.manifest)
    }

    /// The deltas the client has, each made from the one file of it sent (``DeployDerived/deltaSource(of:sizes:)``).
    private func deltas(skipping: Set<String>) throws(DeployFailure) -> DeployPlanned {
        var plan = DeployPlanned.none
        // One listing instead of a look-up of each delta the client has (hundreds of versions' worth).
        let present = presentDeltas()
        for file in needs.begin.files
        where DeployDerived.isDelta(file.path) && !file.path.hasSuffix(".gz") && !file.path.hasSuffix(".br") && !skipping.contains(file.path) {
            try delta(file.path, &plan, present: present)
        }
        return plan
    }

    /// The deltas staged or in the root, as paths relative to the root, of the channels the
    /// client deploys.
    private func presentDeltas() -> Set<String> {
        var present = Set<String>()
        for channel in needs.begin.channels.keys {
            let dir = PublishedLayout.channelPrefix(channel) + PublishedLayout.deltas
            for base in [root, staging.directory] {
                for name in (try? FileIO.list(base + "/" + dir)) ?? [] { present.insert(dir + "/" + name) }
            }
        }
        return present
    }

    /// The delta at `relative` (its `.plist`), made with its gzip variant from the file of it
    /// sent when the edge lacks them; nil when neither it nor that file is here. `present`, when
    /// given, says which files are there (``presentDeltas()``).
    @discardableResult
    private func delta(_ relative: String, _ plan: inout DeployPlanned, read: Bool = false, present: Set<String>? = nil) throws(DeployFailure) -> [UInt8]? {
        let sizes = needs.sizes
        let gz = relative + ".gz"
        let wantsGzip = sizes[gz] != nil && DeployDerived.deltaSource(of: relative, sizes: sizes) != gz
        let has = { (path: String) in present?.contains(path) ?? self.has(path) }
        // All there already: read only when asked for the bytes.
        if !read, has(relative), !wantsGzip || has(gz) { return nil }
        var plain = file(relative)
        if plain == nil { plain = try decodedVariant(of: relative) }
        if let plain, !has(relative) {
            try staging.store(relative, plain)
            plan.rebuilt += 1
        }
        if let plain, wantsGzip, !has(gz) {
            try staging.store(gz, try DeployDerived.deltaGzip(plain))
            plan.rebuilt += 1
        }
        return plain
    }

    // MARK: Objects

    /// The objects the edge does not serve, on all cores (each may compress a variant); what
    /// each made and lacks, added to `plan` in the manifest's order.
    private func objects(_ entries: [Manifest.Entry], _ plan: inout DeployPlanned) throws(DeployFailure) {
        let rebuild = self
        let outcomes = Parallel.map(entries) { entry in
            Result { () throws(DeployFailure) in
                var own = DeployPlanned.none
                try rebuild.object(entry, &own)
                return own
            }
        }
        for outcome in outcomes { plan.add(try outcome.get()) }
    }

    /// One object the edge does not serve: its bytes from a variant sent, its gzip variant made;
    /// what cannot be made goes to `plan.missing` (the smallest variant first).
    private func object(_ entry: Manifest.Entry, _ plan: inout DeployPlanned) throws(DeployFailure) {
        var plain: [UInt8]?
        if !has(entry.objectPath) {
            guard let sent = try decodedVariant(of: entry.objectPath) else {
                // The object and its other variants are made from this one once it arrives.
                plan.missing.append(entry.brotliObjectPath ?? entry.gzipObjectPath ?? entry.objectPath)
                plan.final = false
                return
            }
            try staging.store(entry.objectPath, sent)
            plan.rebuilt += 1
            plan.rebuiltObjects += 1
            plain = sent
        }
        if let gz = entry.gzipObjectPath, !has(gz, size: entry.gzipSize) {
            let made = try? Gzip.compress(try object(entry, plain), level: PublishedCompression.gzipLevel(entry.size))
            try variant(gz, made, size: entry.gzipSize, &plan)
        }
        if let br = entry.brotliObjectPath, !has(br, size: entry.brSize) {
            // Quality 11 runs at about 1 MB/s: sent. Past 1 MiB the builder compresses at 5 (``PublishedCompression``).
            let quality = PublishedCompression.largeObjectBrotliQuality
            let made = entry.size > PublishedCompression.largeObject ? try? Brotli.compress(try object(entry, plain), quality: quality) : nil
            try variant(br, made, size: entry.brSize, &plan)
        }
    }

    /// A variant the edge made, staged when it has the size the manifest gives; else sent.
    private func variant(_ path: String, _ made: [UInt8]?, size: Int?, _ plan: inout DeployPlanned) throws(DeployFailure) {
        guard let made, made.count == size else { return plan.missing.append(path) }
        // Made of the object, which the commit reads and checks against its entry.
        try staging.store(path, made, made: true)
        plan.rebuilt += 1
        plan.rebuiltObjects += 1
    }

    /// The object's bytes: `plain` when it was just made, else read.
    private func object(_ entry: Manifest.Entry, _ plain: [UInt8]?) throws(DeployFailure) -> [UInt8] {
        if let plain { return plain }
        guard let bytes = file(entry.objectPath) else { throw DeployFailure(500, "the edge could not read \(entry.objectPath)") }
        return bytes
    }

    /// The decoded bytes of `path`'s brotli or gzip variant, when one is staged (or, for a
    /// content-addressed file, `objects/` and `deltas/`, in the root).
    private func decodedVariant(of path: String, inRoot: Bool = true) throws(DeployFailure) -> [UInt8]? {
        for (ext, encoding) in [(".br", "br"), (".gz", "gzip")] {
            guard let sent = inRoot ? file(path + ext) : staged(path + ext) else { continue }
            do {
                return encoding == "br" ? try Brotli.decompress(sent, maxSize: DeployRequest.maxBody) : try Gzip.decompress(sent, maxSize: DeployRequest.maxBody)
            } catch { throw DeployFailure(422, "\(path + ext) as sent does not decompress (\(error)): deploy again") }
        }
        return nil
    }

    // MARK: Files

    private func staged(_ relative: String) -> [UInt8]? { try? FileIO.read(staging.directory + "/" + relative) }
    private func isStaged(_ relative: String) -> Bool { FileIO.exists(staging.directory + "/" + relative) }
    /// Staged, else in the published root.
    private func file(_ relative: String) -> [UInt8]? { staged(relative) ?? (try? FileIO.read(root + "/" + relative)) }
    private func has(_ relative: String) -> Bool { isStaged(relative) || FileIO.exists(root + "/" + relative) }
    /// Staged, or in the root at `size` bytes (a variant the new manifest gives another size is made or sent again).
    private func has(_ relative: String, size: Int?) -> Bool { isStaged(relative) || FileIO.size(root + "/" + relative) == size }
}
