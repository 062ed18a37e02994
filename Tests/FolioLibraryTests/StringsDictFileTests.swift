import Foundation
import Testing

@testable import FolioCatalogs
@testable import FolioLocalization

@Suite struct StringsDictFileTests {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        """

    /// A complete .stringsdict whose root dict holds `body`, which starts on line 5.
    static func plist(_ body: String) -> String {
        header + "\n" + body + "\n</dict>\n</plist>\n"
    }

    func parse(_ text: String) -> ParsedCatalogFile {
        StringsDictFile.parse(Array(text.utf8))
    }

    func parseBody(_ body: String) -> ParsedCatalogFile {
        parse(Self.plist(body))
    }

    /// The only error of `file`, as `line:column`, with its message.
    func onlyError(_ file: ParsedCatalogFile) -> (at: String, message: String)? {
        guard file.errors.count == 1, let e = file.errors.first else { return nil }
        return ("\(e.line):\(e.column)", e.message)
    }

    /// The messages of the single section.
    func messages(_ file: ParsedCatalogFile) -> [CatalogMessage] {
        file.sections.count == 1 ? file.sections[0].messages : []
    }

    static let sonnets = #"""
          <key>sonnets</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@count@</string>
            <key>count</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <string>%d sonnet</string>
              <key>other</key>
              <string>%d sonnets</string>
            </dict>
          </dict>
        """#

    static let welsh = #"""
          <key>cats</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>lld</string>
              <key>zero</key>
              <string>%lld cathod</string>
              <key>one</key>
              <string>%lld gath</string>
              <key>two</key>
              <string>%lld gath</string>
              <key>few</key>
              <string>%lld cath</string>
              <key>many</key>
              <string>%lld chath</string>
              <key>other</key>
              <string>%lld cath</string>
            </dict>
          </dict>
        """#

    static let two = #"""
          <key>files_in_folders</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@files@ in %#@folders@</string>
            <key>files</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>lld</string>
              <key>one</key>
              <string>%lld file</string>
              <key>other</key>
              <string>%lld files</string>
            </dict>
            <key>folders</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>u</string>
              <key>one</key>
              <string>%u folder</string>
              <key>other</key>
              <string>%u folders</string>
            </dict>
          </dict>
        """#

    static let entryNotDict = #"""
          <key>greeting</key>
          <string>Hello</string>
        """#

    static let missingFormat = #"""
          <key>k</key>
          <dict>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <string>%d x</string>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
        """#

    static let tokenNoVar = #"""
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@ and %#@m@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <string>%d x</string>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
        """#

    static let wrongSpec = #"""
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringDeviceSpecificRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <string>%d x</string>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
        """#

    static let missingValueType = #"""
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>one</key>
              <string>%d x</string>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
        """#

    static let unknownCategory = #"""
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>several</key>
              <string>%d x</string>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
        """#

    static let nonStringVariant = #"""
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <integer>1</integer>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
        """#

    static let dupRoot = #"""
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <string>%d x</string>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <string>%d x</string>
              <key>other</key>
              <string>%d xs</string>
            </dict>
          </dict>
        """#

    static let dupCategory = #"""
          <key>k</key>
          <dict>
            <key>NSStringLocalizedFormatKey</key>
            <string>%#@n@</string>
            <key>n</key>
            <dict>
              <key>NSStringFormatSpecTypeKey</key>
              <string>NSStringPluralRuleType</string>
              <key>NSStringFormatValueTypeKey</key>
              <string>d</string>
              <key>one</key>
              <string>a</string>
              <key>other</key>
              <string>b</string>
              <key>one</key>
              <string>c</string>
            </dict>
          </dict>
        """#

    static let unicodeCols = #"""
          <key>ключ</key><string>значение</string>
        """#


    // MARK: Mapping

    @Test func englishSonnetsIsAPlural() {
        let file = parseBody(Self.sonnets)
        #expect(file.errors.isEmpty)
        #expect(file.warnings.isEmpty)
        #expect(file.sourceLanguage == nil)
        #expect(file.sections == [CatalogLocaleSection(locale: "", line: 1, column: 1, messages: [
            CatalogMessage(key: "sonnets", value: .plural([.one: "%d sonnet", .other: "%d sonnets"]), line: 5, column: 3),
        ])])
    }

    @Test func welshHasAllSixCategories() {
        let file = parseBody(Self.welsh)
        #expect(file.errors.isEmpty)
        #expect(messages(file) == [CatalogMessage(key: "cats", value: .plural([
            .zero: "%lld cathod", .one: "%lld gath", .two: "%lld gath", .few: "%lld cath", .many: "%lld chath", .other: "%lld cath",
        ]), line: 5, column: 3)])
    }

    @Test func twoVariablesAreSubstitutions() {
        let file = parseBody(Self.two)
        #expect(file.errors.isEmpty)
        #expect(messages(file) == [CatalogMessage(
            key: "files_in_folders",
            value: .substitutions(format: "%#@files@ in %#@folders@", variables: [
                "files": PluralSubstitution(argument: nil, formatSpecifier: "lld", variants: [.one: "%lld file", .other: "%lld files"]),
                "folders": PluralSubstitution(argument: nil, formatSpecifier: "u", variants: [.one: "%u folder", .other: "%u folders"]),
            ]),
            line: 5, column: 3)])
    }

    @Test func entriesKeepFileOrderAndPositions() {
        let file = parseBody(Self.sonnets + "\n" + Self.welsh + "\n" + Self.two)
        #expect(file.errors.isEmpty)
        #expect(messages(file).map(\.key) == ["sonnets", "cats", "files_in_folders"])
        #expect(messages(file).map { "\($0.line):\($0.column)" } == ["5:3", "21:3", "45:3"])
    }

    @Test func singleTokenWithTextAroundIsASubstitution() {
        let body = Self.sonnets.replacingOccurrences(of: "<string>%#@count@</string>", with: "<string>You have %#@count@.</string>")
        #expect(body != Self.sonnets)
        let file = parseBody(body)
        #expect(file.errors.isEmpty)
        #expect(messages(file).first?.value == .substitutions(format: "You have %#@count@.", variables: [
            "count": PluralSubstitution(argument: nil, formatSpecifier: "d", variants: [.one: "%d sonnet", .other: "%d sonnets"]),
        ]))
    }

    @Test func positionalTokens() {
        let lone = parseBody(Self.sonnets.replacingOccurrences(of: "%#@count@", with: "%1$#@count@"))
        #expect(lone.errors.isEmpty)
        #expect(messages(lone).first?.value == .plural([.one: "%d sonnet", .other: "%d sonnets"]))
        let second = parseBody(Self.two.replacingOccurrences(of: "%#@files@ in %#@folders@", with: "%2$#@folders@ hold %1$#@files@"))
        #expect(second.errors.isEmpty)
        guard case .substitutions(let format, let variables)? = messages(second).first?.value else {
            Issue.record("expected substitutions")
            return
        }
        #expect(format == "%2$#@folders@ hold %1$#@files@")
        #expect(variables["folders"]?.argument == 2)
        #expect(variables["files"]?.argument == 1)
    }

    @Test func escapedPercentIsNotAToken() {
        #expect(StringsDictFile.tokens(in: "100%% of %#@n@ and %%#@x@ %d").map(\.name) == ["n"])
        #expect(StringsDictFile.tokens(in: "%#@@ %#@unterminated").isEmpty)
    }

    @Test func bareRootDictWithoutPlistElementIsAccepted() {
        let file = parse("<dict>\n" + Self.sonnets + "\n</dict>\n")
        #expect(file.errors.isEmpty)
        #expect(messages(file).first?.line == 2)
        #expect(messages(file).first?.value == .plural([.one: "%d sonnet", .other: "%d sonnets"]))
    }

    @Test func unusedVariableIsAWarning() {
        let body = Self.two.replacingOccurrences(of: "%#@files@ in %#@folders@", with: "%#@files@")
        let file = parseBody(body)
        #expect(file.errors.isEmpty)
        #expect(file.warnings.map { "\($0.line):\($0.column)" } == ["20:5"])
        #expect(file.warnings.first?.message.contains("\"folders\" in entry \"files_in_folders\" is not used") == true)
        #expect(messages(file).first?.value == .plural([.one: "%lld file", .other: "%lld files"]))
    }

    @Test func columnsCountCharactersNotBytes() {
        let e = onlyError(parseBody(Self.unicodeCols))
        #expect(e?.at == "5:18")
    }

    @Test func utf16FileParsesWithLineOnlyPositions() {
        var bytes: [UInt8] = [0xFF, 0xFE]
        for u in Self.plist(Self.sonnets).replacingOccurrences(of: "UTF-8", with: "UTF-16").utf16 {
            bytes += [UInt8(u & 0xFF), UInt8(u >> 8)]
        }
        let file = StringsDictFile.parse(bytes)
        #expect(file.errors.isEmpty)
        #expect(messages(file) == [
            CatalogMessage(key: "sonnets", value: .plural([.one: "%d sonnet", .other: "%d sonnets"]), line: 5, column: 1),
        ])
    }

    // MARK: Errors

    @Test func malformedXML() {
        let file = parse("<plist version=\"1.0\">\n<dict>\n  <key>a</key>\n</plist>\n")
        let e = onlyError(file)
        #expect(e?.at == "4:9")
        #expect(e?.message.contains("Opening and ending tag mismatch: dict line 2 and plist") == true)
        #expect(e?.message.hasPrefix("not a well-formed XML property list: ") == true)
        #expect(e?.message.hasSuffix("; fix the XML at this position") == true)
        #expect(file.sections == [CatalogLocaleSection(locale: "", messages: [])])
    }

    @Test func nestingBeyondLibxml2LimitIsAnErrorNotACrash() {
        let deep = String(repeating: "<array>", count: 5000) + String(repeating: "</array>", count: 5000)
        let e = onlyError(parse("<plist version=\"1.0\">" + deep + "</plist>"))
        #expect(e?.message.hasPrefix("not a well-formed XML property list: ") == true)
        #expect(e?.at.hasPrefix("1:") == true)
    }

    @Test func keyWithoutValueAndValueWithoutKey() {
        let file = parseBody(Self.sonnets + "\n  <string>stray</string>\n  <key>dangling</key>")
        #expect(file.errors.map { "\($0.line):\($0.column)" } == ["21:3", "22:3"])
        #expect(file.errors.first?.message.hasPrefix("expected <key> in the root <dict>, found <string>") == true)
        #expect(file.errors.last?.message.hasPrefix("<key> in the root <dict> has no value") == true)
        #expect(messages(file).map(\.key) == ["sonnets"])
    }

    @Test func emptyInputIsMalformed() {
        let e = onlyError(parse(""))
        #expect(e?.at == "1:1")
        #expect(e?.message.hasPrefix("not a well-formed XML property list") == true)
    }

    @Test func rootNotADict() {
        let e = onlyError(parse("<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n  <array/>\n</plist>\n"))
        #expect(e?.at == "3:3")
        #expect(e?.message == "the root of a .stringsdict must be a <dict> mapping each key to its entry, found <array>; wrap the entries in <dict>")
    }

    @Test func entryNotADict() {
        let file = parseBody(Self.entryNotDict + "\n" + Self.sonnets.replacingOccurrences(of: "sonnets</key>", with: "later</key>"))
        let e = onlyError(file)
        #expect(e?.at == "6:3")
        #expect(e?.message == "entry \"greeting\" must be a <dict> with NSStringLocalizedFormatKey and its variables, found <string>; plain strings belong in a .strings file")
        #expect(messages(file).map(\.key) == ["later"])
    }

    @Test func missingFormatKey() {
        let e = onlyError(parseBody(Self.missingFormat))
        #expect(e?.at == "5:3")
        #expect(e?.message == "entry \"k\" has no NSStringLocalizedFormatKey; add <key>NSStringLocalizedFormatKey</key> with a format such as <string>%#@count@</string>")
    }

    @Test func tokenWithoutVariable() {
        let file = parseBody(Self.tokenNoVar)
        let e = onlyError(file)
        #expect(e?.at == "8:5")
        #expect(e?.message == "the format of \"k\" uses %#@m@, but the entry has no \"m\" variable; add <key>m</key> with a <dict> of its plural variants, or fix the name")
        #expect(messages(file).isEmpty)
    }

    @Test func specTypeOtherThanPlural() {
        let e = onlyError(parseBody(Self.wrongSpec))
        #expect(e?.at == "12:7")
        #expect(e?.message == "variable \"n\" of \"k\" has NSStringFormatSpecTypeKey \"NSStringDeviceSpecificRuleType\", which is not supported; only NSStringPluralRuleType is, so write <string>NSStringPluralRuleType</string>")
    }

    @Test func missingSpecType() {
        let body = Self.sonnets.replacingOccurrences(of: "<key>NSStringFormatSpecTypeKey</key>", with: "")
            .replacingOccurrences(of: "<string>NSStringPluralRuleType</string>", with: "")
        let e = onlyError(parseBody(body))
        #expect(e?.at == "9:5")
        #expect(e?.message.contains("has no NSStringFormatSpecTypeKey") == true)
    }

    @Test func missingValueType() {
        let e = onlyError(parseBody(Self.missingValueType))
        #expect(e?.at == "9:5")
        #expect(e?.message == "variable \"n\" of \"k\" has no NSStringFormatValueTypeKey; add <key>NSStringFormatValueTypeKey</key> with the count's printf conversion, such as <string>d</string>")
    }

    @Test func unknownCategory() {
        let e = onlyError(parseBody(Self.unknownCategory))
        #expect(e?.at == "15:7")
        #expect(e?.message == "unknown plural category \"several\" in variable \"n\" of \"k\"; use zero, one, two, few, many or other")
    }

    @Test func nonStringVariant() {
        let e = onlyError(parseBody(Self.nonStringVariant))
        #expect(e?.at == "16:7")
        #expect(e?.message == "the \"one\" variant of variable \"n\" of \"k\" must be a <string>, found <integer>; write the text as <string>…</string>")
    }

    @Test func duplicateRootKeysNameBothLines() {
        let file = parseBody(Self.dupRoot)
        let e = onlyError(file)
        #expect(e?.at == "21:3")
        #expect(e?.message == "duplicate key \"k\" in the root <dict> at 21:3; it is already defined at 5:3; remove or rename one of them")
        #expect(messages(file).count == 1)
    }

    @Test func duplicateCategoryKeysNameBothLines() {
        let e = onlyError(parseBody(Self.dupCategory))
        #expect(e?.at == "19:7")
        #expect(e?.message == "duplicate key \"one\" in variable \"n\" of \"k\" at 19:7; it is already defined at 15:7; remove or rename one of them")
    }

    @Test func doesNotCheckCategoriesAgainstLocaleOrRequireOther() {
        let body = Self.sonnets.replacingOccurrences(of: "<key>other</key>", with: "<key>few</key>")
        let file = parseBody(body)
        #expect(file.errors.isEmpty)
        #expect(messages(file).first?.value == .plural([.one: "%d sonnet", .few: "%d sonnets"]))
    }

    @Test func predefinedAndCharacterReferencesAreText() {
        let body = Self.sonnets.replacingOccurrences(of: "%d sonnets<", with: "%d sonnets &amp; po&#232;mes &lt;3<")
        let file = parseBody(body)
        #expect(file.errors.isEmpty)
        #expect(messages(file).first?.value == .plural([.one: "%d sonnet", .other: "%d sonnets & poèmes <3"]))
    }

    @Test func entitiesAreNotExpanded() {
        let doc = """
            <?xml version="1.0"?>
            <!DOCTYPE plist [
              <!ENTITY secret SYSTEM "file:///etc/passwd">
              <!ENTITY word "sonnet">
            ]>
            <plist version="1.0">
            <dict>
            \(Self.sonnets.replacingOccurrences(of: "%d sonnets", with: "&secret;").replacingOccurrences(of: "%d sonnet<", with: "%d &word;<"))
            </dict>
            </plist>
            """
        let file = parse(doc)
        #expect(file.errors.count == 2)
        #expect(file.errors.allSatisfy { $0.message.contains("entity reference") })
        #expect(file.errors.map(\.line) == [19, 21])
        #expect(messages(file).isEmpty)
        #expect(!"\(file)".contains("root:"))
    }
}
