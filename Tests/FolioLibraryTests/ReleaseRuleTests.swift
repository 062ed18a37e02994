import Foundation
import FolioPlist
import FolioPublished
import FolioSupport
import Testing

/// Staged rollouts and targeting as clients evaluate them: the buckets' spread and stability,
/// conditions, and releases inside the (signed) manifest.
@Suite("release rules")
struct ReleaseRuleTests {
    static func entry(_ path: String, _ text: String) -> Manifest.Entry {
        let bytes = Array(text.utf8)
        return Manifest.Entry(path: path, sha256: ContentHash.sha256Hex(bytes), size: bytes.count, gzipSize: nil, contentType: Manifest.plistContentType)
    }

    static let defaults = [entry("a.plist", "a1"), entry("b.plist", "b1"), entry("c.plist", "c1")]

    static func manifest(_ releases: [Release]) -> Manifest {
        var m = Manifest(version: 9, createdAt: Date(timeIntervalSince1970: 1_700_000_000), history: "h1", entries: defaults)
        m.releases = releases
        return m
    }

    static func staged(_ id: Int, _ bp: Int, conditions: [ReleaseCondition] = []) -> Release {
        Release(id: id, rolloutBasisPoints: bp, conditions: conditions, from: defaults, to: [entry("a.plist", "a\(id)"), defaults[1]])
    }

    /// 100,000 install ids, made the way ContentCache makes them (random 128-bit hex).
    static let installs: [String] = {
        var rng = SystemRandomNumberGenerator()
        return (0..<100_000).map { _ in ContentHash.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
    }()

    @Test("a 10% rollout lands at 10% ± 0.5 of 100,000 installs; raised to 25% it keeps the first 10% in")
    func rolloutShare() {
        let ten = Self.manifest([Self.staged(9, 1000)])
        let first = Set(Self.installs.filter { ten.chooseRelease(installID: $0, context: ReleaseContext()).release == 9 })
        let share = Double(first.count) / Double(Self.installs.count)
        #expect(abs(share - 0.10) <= 0.005, "10% rollout reached \(share * 100)%")
        // The same ids decide the same way on every sync.
        let again = Set(Self.installs.filter { ten.chooseRelease(installID: $0, context: ReleaseContext()).release == 9 })
        #expect(again == first)
        var raised = ten
        raised.version = 10
        raised.releases[0].rolloutBasisPoints = 2500
        let second = Set(Self.installs.filter { raised.chooseRelease(installID: $0, context: ReleaseContext()).release == 9 })
        #expect(first.isSubset(of: second), "\(first.subtracting(second).count) installs left the release when it grew")
        #expect(abs(Double(second.count) / Double(Self.installs.count) - 0.25) <= 0.005)
    }

    @Test("buckets are independent from one release to the next, and halting reaches nobody")
    func independentAndHalted() {
        let a = Self.manifest([Self.staged(9, 5000)])
        let b = Self.manifest([Self.staged(10, 5000)])
        var both = 0
        for id in Self.installs.prefix(20_000) where a.chooseRelease(installID: id, context: ReleaseContext()).release == 9 {
            if b.chooseRelease(installID: id, context: ReleaseContext()).release == 10 { both += 1 }
        }
        // Independent halves overlap on a quarter.
        #expect(abs(Double(both) / 20_000 - 0.25) < 0.02, "overlap \(both) of 20000")
        var halted = Self.manifest([Self.staged(9, 10_000)])
        halted.releases[0].halted = true
        #expect(Self.installs.prefix(1000).allSatisfy { halted.chooseRelease(installID: $0, context: ReleaseContext()).release == nil })
        #expect(halted.chooseRelease(installID: "x", context: ReleaseContext()).reasons.first == "release 9: halted")
    }

    @Test("conditions: version ranges, platforms, locale ranges, countries; an unknown field matches nothing")
    func conditions() throws {
        let ctx = ReleaseContext(appVersion: "3.2.1", platform: "iOS", osVersion: "17.4", locale: "fr_CA", country: "fr")
        func holds(_ text: String, _ c: ReleaseContext = ctx) throws -> Bool { try ReleaseCondition(parsing: text).matches(c) }
        #expect(try holds("app-version>=3.2"))
        #expect(try !holds("app-version<3.2"))
        #expect(try holds("app-version<3.10"))
        #expect(try holds("app-version=3.2.1,4"))
        #expect(try holds("os-version<18"))
        #expect(try holds("platform=ios,android"))
        #expect(try !holds("platform!=ios"))
        #expect(try holds("locale=fr"))
        #expect(try !holds("locale=fr-FR"))
        #expect(try holds("country=FR,BE"))
        #expect(try !holds("platform=ios", ReleaseContext()))
        #expect(try !holds("platform!=ios", ReleaseContext()), "a context without the field matches no condition on it")
        for bad in ["os>=3", "platform>=ios", "app-version>=3.2-beta", "app-version>=1,2", "country=", "locale"] {
            #expect(throws: ManifestError.self, "'\(bad)' was accepted") { try ReleaseCondition(parsing: bad) }
        }
    }

    @Test("the first matching release wins; a targeted release reaches only the apps it names")
    func firstMatchWins() throws {
        let ios = Self.staged(11, 10_000, conditions: [try ReleaseCondition(parsing: "platform=ios")])
        let everyone = Self.staged(9, 10_000)
        let m = Self.manifest([ios, everyone])
        #expect(m.chooseRelease(installID: "install-0000000001", context: ReleaseContext(platform: "ios")).release == 11)
        let android = m.chooseRelease(installID: "install-0000000001", context: ReleaseContext(platform: "android"))
        #expect(android.release == 9)
        #expect(android.reasons.first == "release 11: platform=ios does not hold for platform android")
        let applied = m.applying(release: 11)
        #expect(applied.releases.isEmpty)
        #expect(applied.entry("a.plist")?.sha256 == Self.entry("a.plist", "a11").sha256)
        #expect(applied.entry("c.plist") == nil, "the release removes c.plist")
        #expect(m.applying(release: nil).entries == Self.defaults)
        #expect(m.applying(release: 404).entries == Self.defaults, "a release the manifest lost gives the defaults")
    }

    @Test("releases, the channel and the critical flag survive the manifest's plist; bad ones are refused")
    func roundTrip() throws {
        var release = Self.staged(9, 1234, conditions: [try ReleaseCondition(parsing: "app-version>=3")])
        release.critical = true
        release.minimumAppVersion = "3.1"
        var m = Self.manifest([release])
        m.channel = "beta"
        m.critical = true
        let back = try Manifest(bytes: BinaryPlist.encode(m.plist))
        #expect(back == m)
        #expect(back.applying(release: 9).minimumAppVersion == "3.1")
        #expect(back.allEntries.count == 3 + 1)
        guard case .dict(var root) = m.plist, case .array(var releases) = root["releases"], case .dict(var r) = releases[0] else {
            Issue.record("not a dictionary")
            return
        }
        r["rolloutBasisPoints"] = .int(10_001)
        releases[0] = .dict(r)
        root["releases"] = .array(releases)
        #expect(throws: ManifestError.self) { try Manifest(plist: .dict(root)) }
        root["releases"] = .array([m.plist["releases"]!.arrayValue![0], m.plist["releases"]!.arrayValue![0]])
        #expect(throws: ManifestError.self) { try Manifest(plist: .dict(root)) }
        root["releases"] = nil
        root["channel"] = .string("Beta Channel")
        #expect(throws: ManifestError.self) { try Manifest(plist: .dict(root)) }
    }

    @Test("percentages: whole and two-decimal shares, and nothing else")
    func percentages() {
        #expect(Release.basisPoints(percent: "10") == 1000)
        #expect(Release.basisPoints(percent: "2.5%") == 250)
        #expect(Release.basisPoints(percent: "0.01") == 1)
        #expect(Release.basisPoints(percent: "100") == 10_000)
        for bad in ["101", "-1", "0.001", "ten", "1e1", ""] { #expect(Release.basisPoints(percent: bad) == nil, "\(bad)") }
        #expect(Release.percentText(250) == "2.50%")
        #expect(Release.percentText(1000) == "10%")
    }
}
