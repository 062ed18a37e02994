import FolioTestSupport
import Foundation
import Testing

/// `[catalogs.partial]` in folio.toml: partial coverage as a decision.
extension CatalogBuildTests {
    /// English with three keys; fr translates one, de two, it one.
    func partialFixture(_ dir: String, project: String) throws -> String {
        let c = content([
            "en/Localizable.strings": Self.english,
            "fr/Localizable.strings": "\"app.title\" = \"Sonnets\";",
            "de/Localizable.strings": "\"app.title\" = \"Sonette\";\n\"reader.title\" = \"Sonett %@\";",
            "it/Localizable.strings": "\"app.title\" = \"Sonetti\";",
        ], in: dir)
        try Data(project.utf8).write(to: URL(fileURLWithPath: c + "/folio.toml"))
        return c
    }

    @Test("catalogs.partial: \"*\" silences a locale, a list only its keys; --strict fails on the rest")
    func partialDeclared() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = try partialFixture(dir, project: """
            [catalogs.partial]
            fr = "*"
            de = ["reader.position"]
            it = ["reader.title"]
            """)
        let r = try publish(c, dir + "/public", ["--strict"])
        // fr and de leave out only what they declared; it leaves out one key more than it said.
        #expect(r.status == 1, "\(r.stderr)")
        #expect(!r.stderr.contains("fr/Localizable") && !r.stderr.contains("de/Localizable"), "\(r.stderr)")
        #expect(r.stderr.contains("it/Localizable: 1 of 3 keys translated (33%); untranslated, falling back: reader.position (not declared in [catalogs.partial])"), "\(r.stderr)")
        #expect(r.stderr.contains("1 error(s)"), "\(r.stderr)")
        // Without the declarations every short locale is reported, with what to do.
        let bare = try partialFixture(dir + "/bare", project: "")
        let all = try publish(bare, dir + "/bare-public")
        #expect(all.status == 0)
        for locale in ["fr", "de", "it"] { #expect(all.stderr.contains("warning: \(locale)/Localizable:"), "\(all.stderr)") }
        #expect(all.stderr.contains("translate them, or declare them in the project file's [catalogs.partial]"), "\(all.stderr)")
    }

    @Test("catalogs.partial: a stale declaration is a warning at its line; a bad one an error")
    func partialStale() throws {
        let dir = Harness.tempDir()
        defer { Harness.cleanup(dir) }
        let c = try partialFixture(dir, project: """
            [catalogs.partial]
            fr = "*"
            de = ["reader.position", "reader.title", "no.such.key"]
            it = ["reader.title", "reader.position"]
            ja = "*"
            """)
        let r = try publish(c, dir + "/public")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("folio.toml:3:1: warning: catalogs.partial: de translates \"reader.title\" now; remove it from the list"), "\(r.stderr)")
        #expect(r.stderr.contains("folio.toml:3:1: warning: catalogs.partial: \"no.such.key\" is not a key of the development language's catalogs"), "\(r.stderr)")
        #expect(r.stderr.contains("folio.toml:5:1: warning: catalogs.partial names ja, which no catalog translates; remove it"), "\(r.stderr)")
        #expect(!r.stderr.contains("keys translated"), "\(r.stderr)")
        for (project, message) in [
            ("[catalogs.partial]\nfr = 3\n", "folio.toml:2:1: error: fr must be \"*\" (any key may be missing) or a list of the keys it leaves out"),
            ("[catalogs.partial]\n\"x y\" = \"*\"\n", "'x y' is not a valid locale tag"),
            ("[catalogs]\npartials = {}\n", "unknown catalogs setting 'partials'; [catalogs] has partial"),
            ("[catalog]\n", "unknown setting 'catalog'; the project file has [[rules]] tables and [catalogs]"),
        ] {
            let bad = try partialFixture(dir + "/bad", project: project)
            let b = try publish(bad, dir + "/bad-public")
            #expect(b.status == 1 && b.stderr.contains(message), "\(project): \(b.stderr)")
        }
    }
}
