import Testing

@testable import FolioCatalogs
@testable import FolioLocalization

@Suite struct XLIFFFileTests {
    func parse(_ text: String) -> ParsedCatalogFile {
        XLIFFFile.parse(Array(text.utf8))
    }

    /// The only error of `text`, which must have exactly one.
    func onlyError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> CatalogDiagnostic? {
        let result = parse(text)
        #expect(result.errors.count == 1, "\(result.errors)", sourceLocation: sourceLocation)
        return result.errors.first
    }

    /// An Xcode-style XLIFF 1.2 export: two `<file>`s (es, es-419), notes, states, placeholders, a plural.
    static let xliff12 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
          <file original="Shop/Localizable.xcstrings" source-language="en" target-language="es" datatype="plaintext">
            <header>
              <tool tool-id="com.apple.dt.xcode" tool-name="Xcode" tool-version="15.0" build-num="15A240d"/>
            </header>
            <body>
              <trans-unit id="cart.title" xml:space="preserve">
                <source>Shopping Cart</source>
                <target state="translated">Carrito</target>
                <note>Title of the cart screen</note>
              </trans-unit>
              <trans-unit id="cart.count" resname="items.in.cart" xml:space="preserve">
                <source>You have <x id="1" equiv-text="%d"/> items in <g id="2">your cart</g></source>
                <target state="needs-review-translation">Tienes <x id="1" equiv-text="%d"/> artículos en <g id="2">tu <mrk mtype="term">carrito</mrk></g></target>
                <note from="developer">Count of items</note>
                <note>Shown on the checkout button</note>
              </trans-unit>
              <group id="plurals">
                <trans-unit id="%lld apples|==|plural.one" xml:space="preserve">
                  <source>%lld apple</source>
                  <target state="translated">%lld manzana</target>
                  <note>Apples in the basket</note>
                </trans-unit>
                <trans-unit id="%lld apples|==|plural.other" xml:space="preserve">
                  <source>%lld apples</source>
                  <target state="final">%lld manzanas</target>
                  <note>Apples in the basket</note>
                </trans-unit>
              </group>
              <trans-unit id="checkout" xml:space="preserve">
                <source>Checkout</source>
                <target state="new">Checkout</target>
              </trans-unit>
              <trans-unit id="logo.alt" translate="no">
                <source>ACME</source>
                <target>ACME</target>
              </trans-unit>
            </body>
          </file>
          <file original="Shop/Localizable.xcstrings" source-language="en" target-language="es-419" datatype="plaintext">
            <body>
              <trans-unit id="cart.title">
                <source>Shopping Cart</source>
                <target>Carrito de compras</target>
              </trans-unit>
              <trans-unit id="greeting">
                <source>Hello, <ph id="1" equiv-text="%@">{name}</ph>!</source>
                <target state="signed-off">¡Hola, <ph id="1" equiv-text="%@">{name}</ph>! <bpt id="2">&lt;b&gt;</bpt>Ya<ept id="2">&lt;/b&gt;</ept></target>
              </trans-unit>
            </body>
          </file>
        </xliff>
        """

    @Test func xliff12TwoFilesNotesStatesPlaceholdersAndPlural() {
        let result = parse(Self.xliff12)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        #expect(result.sourceLanguage == "en")
        #expect(result.sections.map(\.locale) == ["es", "es-419"])
        #expect(result.sections.map(\.line) == [3, 41])
        #expect(result.sections.map(\.column) == [68, 68])
        #expect(result.sections.first?.messages == [
            CatalogMessage(
                key: "cart.title", value: .string("Carrito"), source: .string("Shopping Cart"),
                comment: "Title of the cart screen", state: "translated", line: 10, column: 9),
            CatalogMessage(
                key: "items.in.cart", value: .string("Tienes %d artículos en tu carrito"),
                source: .string("You have %d items in your cart"),
                comment: "Count of items\nShown on the checkout button", state: "needs-review-translation", line: 15, column: 9),
            CatalogMessage(
                key: "%lld apples", value: .plural([.one: "%lld manzana", .other: "%lld manzanas"]),
                source: .plural([.one: "%lld apple", .other: "%lld apples"]),
                comment: "Apples in the basket", state: "translated", line: 22, column: 11),
            CatalogMessage(
                key: "checkout", value: nil, source: .string("Checkout"), comment: nil, state: "new", line: 33, column: 9),
        ])
        #expect(result.sections.last?.messages == [
            CatalogMessage(key: "cart.title", value: .string("Carrito de compras"), source: .string("Shopping Cart"), line: 45, column: 9),
            CatalogMessage(
                key: "greeting", value: .string("¡Hola, %@! <b>Ya</b>"), source: .string("Hello, %@!"), state: "signed-off",
                line: 49, column: 9),
        ])
    }

    @Test func xliff12SameLocaleFilesMergeInOrder() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="A.strings" source-language="en" target-language="fr" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source><target>A-fr</target></trans-unit>
              </body></file>
              <file original="A.strings" source-language="en" target-language="de" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source><target>A-de</target></trans-unit>
              </body></file>
              <file original="B.strings" source-language="en" target-language="fr" datatype="plaintext"><body>
                <trans-unit id="b"><source>B</source><target>B-fr</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.sections.map(\.locale) == ["fr", "de"])
        #expect(result.sections.map(\.line) == [2, 5])
        #expect(result.sections.first?.messages.map(\.key) == ["a", "b"])
        #expect(result.sections.first?.messages.map(\.value) == [.string("A-fr"), .string("B-fr")])
        #expect(result.sections.first?.messages.map(\.line) == [3, 9])
        #expect(result.sections.last?.messages.map(\.value) == [.string("A-de")])
    }

    /// An XLIFF 2.0 file (pt-BR): notes, segment states, placeholders, several segments, a plural.
    static let xliff20 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="pt-BR">
          <file id="f1" original="Localizable.strings">
            <notes><note id="n0">File-level note, not a unit comment</note></notes>
            <unit id="welcome">
              <notes>
                <note category="description">Greeting on the home screen</note>
                <note>Keep it short</note>
              </notes>
              <segment state="final">
                <source>Welcome, <ph id="1" equiv="%@" disp="{user}"/>!</source>
                <target>Bem-vindo, <ph id="1" equiv="%@" disp="{user}"/>!</target>
              </segment>
            </unit>
            <group id="g1">
              <unit id="intro">
                <segment id="s1" state="translated">
                  <source>First sentence.</source>
                  <target>Primeira frase.</target>
                </segment>
                <ignorable>
                  <source> </source>
                </ignorable>
                <segment id="s2" state="reviewed">
                  <source>Second <pc id="2">bold</pc> one <sc id="3" disp="%1$d"/>.</source>
                  <target>Segunda <pc id="2"><mrk id="m1" translate="yes">negrito</mrk></pc> frase <sc id="3" disp="%1$d"/>.</target>
                </segment>
              </unit>
              <unit id="pending">
                <segment state="initial">
                  <source>Not yet</source>
                </segment>
              </unit>
              <unit id="empty">
                <segment>
                  <source>Empty</source>
                  <target></target>
                </segment>
              </unit>
            </group>
            <unit id="%lld files|==|plural.one">
              <segment state="translated"><source>%lld file</source><target>%lld arquivo</target></segment>
            </unit>
            <unit id="%lld files|==|plural.other">
              <segment state="translated"><source>%lld files</source><target>%lld arquivos</target></segment>
            </unit>
            <unit id="brand" translate="no">
              <segment><source>ACME</source><target>ACME</target></segment>
            </unit>
            <unit id="bell">
              <originalData><data id="d1">%1$@</data></originalData>
              <segment><source>Ring<cp hex="0007"/> <ph id="1" dataRef="d1"/></source><target>Tocar<cp hex="7"/> <ph id="1" dataRef="d1"/></target></segment>
            </unit>
          </file>
        </xliff>
        """

    @Test func xliff20NotesStatesPlaceholdersSegmentsAndPlural() {
        let result = parse(Self.xliff20)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        #expect(result.sourceLanguage == "en")
        #expect(result.sections.count == 1)
        #expect(result.sections.first?.locale == "pt-BR")
        #expect(result.sections.first?.line == 2)
        #expect(result.sections.first?.column == 81)
        #expect(result.sections.first?.messages == [
            CatalogMessage(
                key: "welcome", value: .string("Bem-vindo, %@!"), source: .string("Welcome, %@!"),
                comment: "Greeting on the home screen\nKeep it short", state: "final", line: 12, column: 9),
            CatalogMessage(
                key: "intro", value: .string("Primeira frase. Segunda negrito frase %1$d."),
                source: .string("First sentence. Second bold one %1$d."), state: "translated", line: 19, column: 11),
            CatalogMessage(key: "pending", value: nil, source: .string("Not yet"), state: "initial", line: 29, column: 7),
            CatalogMessage(key: "empty", value: nil, source: .string("Empty"), line: 37, column: 11),
            CatalogMessage(
                key: "%lld files", value: .plural([.one: "%lld arquivo", .other: "%lld arquivos"]),
                source: .plural([.one: "%lld file", .other: "%lld files"]), state: "translated", line: 42, column: 61),
            CatalogMessage(key: "bell", value: .string("Tocar\u{7} %1$@"), source: .string("Ring\u{7} %1$@"), line: 52, column: 79),
        ])
    }

    @Test func xliff21IsAccepted() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.1" srcLang="en" trgLang="de">
              <file id="f"><unit id="k"><segment><source>Hi</source><target>Hallo</target></segment></unit></file>
            </xliff>
            """)
        #expect(result.errors.isEmpty)
        #expect(result.sections.first?.messages.map(\.value) == [.string("Hallo")])
    }

    @Test func cdataEmptyNotesAltTransMultiLineTagsAndOtherVariations() {
        let result = parse("""
            <?xml version="1.0" encoding="UTF-8"?>
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="App/Localizable.xcstrings" source-language="en" target-language="de" datatype="plaintext">
                <body>
                  <trans-unit id="Hello" xml:space="preserve">
                    <source><![CDATA[Hello <world>]]></source>
                    <target state="translated">Hallo &lt;Welt&gt;</target>
                    <note/>
                  </trans-unit>
                  <trans-unit id="x|==|device.iphone" xml:space="preserve">
                    <source>x</source>
                  </trans-unit>
                  <trans-unit
                      id="multi"
                      xml:space="preserve"><source>m</source><target>M</target>
                    <alt-trans><target>ALT</target><note>alt note</note></alt-trans>
                  </trans-unit>
                </body>
              </file>
            </xliff>
            """)
        #expect(result.errors.isEmpty)
        #expect(result.warnings.map(\.line) == [10])
        #expect(result.warnings.first?.message.contains("variation \"device.iphone\"") == true)
        #expect(result.sections.first?.messages == [
            CatalogMessage(
                key: "Hello", value: .string("Hallo <Welt>"), source: .string("Hello <world>"), state: "translated",
                line: 7, column: 9),
            CatalogMessage(key: "multi", value: .string("M"), source: .string("m"), line: 15, column: 50),
        ])
    }

    // MARK: Untranslated and skipped units

    @Test func untranslatedStates12() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="none"><source>No target</source></trans-unit>
                <trans-unit id="empty"><source>Empty</source><target/></trans-unit>
                <trans-unit id="new"><source>New</source><target state="new">Nuovo</target></trans-unit>
                <trans-unit id="needs"><source>Needs</source><target state="needs-translation">Serve</target></trans-unit>
                <trans-unit id="review"><source>Review</source><target state="needs-review-translation">Rivedi</target></trans-unit>
                <trans-unit id="plain"><source>Plain</source><target>Semplice</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.isEmpty)
        let messages = result.sections.first?.messages ?? []
        #expect(messages.map(\.key) == ["none", "empty", "new", "needs", "review", "plain"])
        #expect(messages.map(\.value) == [nil, nil, nil, nil, .string("Rivedi"), .string("Semplice")])
        #expect(messages.map(\.state) == [nil, nil, "new", "needs-translation", "needs-review-translation", nil])
        #expect(messages.map(\.source) == ["No target", "Empty", "New", "Needs", "Review", "Plain"].map { .string($0) })
        // No target: the unit's position; otherwise the target's.
        #expect(messages.map(\.column) == [5, 50, 46, 50, 52, 50])
    }

    @Test func pluralWithAnUntranslatedVariantKeepsTheTranslatedOnes() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="ru" datatype="plaintext"><body>
                <trans-unit id="n|==|plural.one"><source>%d day</source><target state="translated">%d день</target></trans-unit>
                <trans-unit id="n|==|plural.few"><source>%d days</source><target state="new"/></trans-unit>
                <trans-unit id="n|==|plural.other"><source>%d days</source><target state="translated">%d дней</target></trans-unit>
                <trans-unit id="m|==|plural.one"><source>%d</source><target state="new">x</target></trans-unit>
                <trans-unit id="m|==|plural.other"><source>%d</source></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.isEmpty)
        let messages = result.sections.first?.messages ?? []
        #expect(messages.map(\.key) == ["n", "m"])
        #expect(messages.first?.value == .plural([.one: "%d день", .other: "%d дней"]))
        #expect(messages.first?.source == .plural([.one: "%d day", .few: "%d days", .other: "%d days"]))
        #expect(messages.first?.state == "new")
        #expect(messages.last?.value == nil)
        #expect(messages.last?.source == .plural([.one: "%d", .other: "%d"]))
    }

    @Test func translateNoIsSkippedAndInherited() {
        let v12 = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="skip" translate="no"><source>S</source><target>S</target></trans-unit>
                <group translate="no">
                  <trans-unit id="inherited"><source>I</source><target>I</target></trans-unit>
                  <trans-unit id="override" translate="yes"><source>O</source><target>O-it</target></trans-unit>
                </group>
                <trans-unit id="keep"><source>K</source><target>K-it</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(v12.errors.isEmpty)
        #expect(v12.sections.first?.messages.map(\.key) == ["override", "keep"])
        let v20 = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="it">
              <file id="f">
                <unit id="skip" translate="no"><segment><source>S</source><target>S</target></segment></unit>
                <group id="g" translate="no"><unit id="inherited"><segment><source>I</source><target>I</target></segment></unit></group>
                <unit id="keep"><segment><source>K</source><target>K-it</target></segment></unit>
              </file>
            </xliff>
            """)
        #expect(v20.errors.isEmpty)
        #expect(v20.sections.first?.messages.map(\.key) == ["keep"])
    }

    @Test func unitsWithoutTargetsOrLanguageGiveNoSection() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.isEmpty)
        #expect(result.sections.isEmpty)
        #expect(result.sourceLanguage == "en")
    }

    @Test func placeholderWithoutEquivTextWarns() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="a"><source>A <x id="1"/></source><target>B <x id="1"/></target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.isEmpty)
        #expect(result.sections.first?.messages.first?.value == .string("B "))
        #expect(result.warnings.map(\.line) == [3, 3])
        #expect(result.warnings.map(\.column) == [34, 64])
        #expect(result.warnings.first?.message.contains("equiv-text") == true)
    }

    @Test func doctypeWithoutEntitiesIsAccepted() {
        let result = parse("""
            <?xml version="1.0"?>
            <!DOCTYPE xliff>
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="a"><source>A &amp; B</source><target>A &#38; B &#x263A;</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.isEmpty)
        #expect(result.sections.first?.messages.first?.value == .string("A & B ☺"))
    }

    @Test func utf16InputReadsTheSameMessages() {
        let text = Self.xliff12.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"UTF-16\"")
        var bytes: [UInt8] = [0xFF, 0xFE]
        for u in text.utf16 { bytes += [UInt8(u & 0xFF), UInt8(u >> 8)] }
        let utf16 = XLIFFFile.parse(bytes)
        let utf8 = parse(Self.xliff12)
        #expect(utf16.errors.isEmpty, "\(utf16.errors)")
        #expect(utf16.sections.map(\.locale) == utf8.sections.map(\.locale))
        #expect(utf16.sections.flatMap(\.messages).map(\.value) == utf8.sections.flatMap(\.messages).map(\.value))
        #expect(utf16.sections.flatMap(\.messages).map(\.line) == utf8.sections.flatMap(\.messages).map(\.line))
    }

    // MARK: Errors

    @Test func notWellFormed() {
        let e = onlyError("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source><target>B</source></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(e?.line == 3)
        #expect(e?.message.hasPrefix("not well-formed XML: ") == true)
        #expect(e?.message.contains("fix the markup") == true)
        let empty = onlyError("")
        #expect(empty?.message.hasPrefix("not well-formed XML") == true)
        let amp = onlyError("<xliff xmlns=\"urn:oasis:names:tc:xliff:document:1.2\" version=\"1.2\">\n<file>Fish & chips</file></xliff>")
        #expect(amp?.line == 2)
        let deep = onlyError(
            "<xliff xmlns=\"urn:oasis:names:tc:xliff:document:1.2\" version=\"1.2\">\n<file target-language=\"it\"><body>"
                + String(repeating: "<group>", count: 300) + String(repeating: "</group>", count: 300) + "</body></file></xliff>")
        #expect(deep?.line == 2)
        #expect(deep?.message.contains("nest deeper than 256") == true)
    }

    @Test func notXLIFF() {
        let e = onlyError("<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict/></plist>")
        #expect(e?.line == 2)
        #expect(e?.column == 1)
        #expect(e?.message.contains("not an XLIFF file: the root element is <plist>") == true)
        #expect(e?.message.contains("XLIFF 1.2") == true)
        #expect(e?.message.contains("XLIFF 2.0") == true)
    }

    @Test func unsupportedVersions() {
        let v11 = onlyError("\n  <xliff xmlns=\"urn:oasis:names:tc:xliff:document:1.1\" version=\"1.1\"/>")
        #expect(v11?.line == 2)
        #expect(v11?.column == 3)
        #expect(v11?.message.contains("unsupported XLIFF namespace \"urn:oasis:names:tc:xliff:document:1.1\"") == true)
        #expect(v11?.message.contains("XLIFF 1.2") == true)
        let v30 = onlyError("<xliff xmlns=\"urn:oasis:names:tc:xliff:document:2.0\" version=\"3.0\" srcLang=\"en\"/>")
        #expect(v30?.line == 1)
        #expect(v30?.message.contains("version \"3.0\"") == true)
        #expect(v30?.message.contains("XLIFF 2.0") == true)
        let bare = onlyError("<xliff version=\"1.0\"/>")
        #expect(bare?.message.contains("version \"1.0\" and no xmlns") == true)
    }

    @Test func missingTargetLanguage() {
        let v12 = onlyError("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="Main.strings" source-language="en" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source></trans-unit>
                <trans-unit id="b"><source>B</source><target>B2</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(v12?.line == 2)
        #expect(v12?.column == 3)
        #expect(v12?.message.contains("<file original=\"Main.strings\"> has <target> elements (the first at line 4) but no target-language") == true)
        let v20 = onlyError("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en">
              <file id="f">
                <unit id="a"><segment><source>A</source><target>A2</target></segment></unit>
              </file>
            </xliff>
            """)
        #expect(v20?.line == 1)
        #expect(v20?.message.contains("no trgLang") == true)
        #expect(v20?.message.contains("line 3") == true)
    }

    @Test func unitWithoutID() {
        let v12 = onlyError("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source><target>A2</target></trans-unit>
                <trans-unit><source>B</source><target>B2</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(v12?.line == 4)
        #expect(v12?.column == 5)
        #expect(v12?.message.contains("<trans-unit> without an id") == true)
        let v20 = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="it">
              <file id="f">
                <unit id=""><segment><source>A</source><target>A2</target></segment></unit>
                <unit id="b"><segment><source>B</source><target>B2</target></segment></unit>
              </file>
            </xliff>
            """)
        #expect(v20.errors.map(\.line) == [3])
        #expect(v20.errors.first?.message.contains("<unit> without an id") == true)
        #expect(v20.sections.first?.messages.map(\.key) == ["b"])
    }

    @Test func duplicateKeys() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="A" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source><target>A1</target></trans-unit>
                <trans-unit id="x" resname="a"><source>A</source><target>A2</target></trans-unit>
                <trans-unit id="p|==|plural.one"><source>P</source><target>P1</target></trans-unit>
                <trans-unit id="p|==|plural.one"><source>P</source><target>P2</target></trans-unit>
                <trans-unit id="p"><source>P</source><target>P3</target></trans-unit>
              </body></file>
              <file original="B" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source><target>A3</target></trans-unit>
              </body></file>
              <file original="C" source-language="en" target-language="fr" datatype="plaintext"><body>
                <trans-unit id="a"><source>A</source><target>A-fr</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.map(\.line) == [4, 6, 7, 10])
        #expect(result.errors.map(\.column) == [5, 5, 5, 5])
        #expect(result.errors.first?.message.contains("duplicate key \"a\" for locale it: first at line 3, again at line 4") == true)
        #expect(result.errors[1].message.contains("duplicate key \"p|==|plural.one\" for locale it: first at line 5, again at line 6") == true)
        #expect(result.errors[2].message.contains("line 5 has it as plural variants and line 7 as a plain string") == true)
        #expect(result.errors[3].message.contains("first at line 3, again at line 10") == true)
        // The first of each key is kept; the other locale is unaffected.
        #expect(result.sections.first?.messages.map(\.value) == [.string("A1"), .plural([.one: "P1"])])
        #expect(result.sections.last?.messages.map(\.value) == [.string("A-fr")])
        let v20 = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="it">
              <file id="f1"><unit id="k"><segment><source>K</source><target>K1</target></segment></unit></file>
              <file id="f2"><unit id="k"><segment><source>K</source><target>K2</target></segment></unit></file>
            </xliff>
            """)
        #expect(v20.errors.map(\.line) == [3])
        #expect(v20.errors.first?.message.contains("first at line 2, again at line 3") == true)
    }

    @Test func targetWithoutSource() {
        let v12 = onlyError("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>

                <trans-unit id="a"><target>A2</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(v12?.line == 4)
        #expect(v12?.column == 5)
        #expect(v12?.message.contains("<trans-unit id=\"a\"> has a <target> but no <source>") == true)
        let v20 = onlyError("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="it">
              <file id="f">
                <unit id="a">
                  <segment><source>One.</source><target>Uno.</target></segment>
                  <segment><target>Due.</target></segment>
                </unit>
              </file>
            </xliff>
            """)
        #expect(v20?.line == 5)
        #expect(v20?.column == 7)
        #expect(v20?.message.contains("<segment> in <unit id=\"a\"> has a <target> but no <source>") == true)
    }

    @Test func unknownPluralCategory() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="n|==|plural.one"><source>one</source><target>uno</target></trans-unit>
                <trans-unit id="n|==|plural.several"><source>some</source><target>alcuni</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(result.errors.map(\.line) == [4])
        #expect(result.errors.first?.message.contains("unknown plural category \"several\" in \"n|==|plural.several\"") == true)
        #expect(result.errors.first?.message.contains("zero, one, two, few, many, other") == true)
        #expect(result.sections.first?.messages.first?.value == .plural([.one: "uno"]))
    }

    @Test func doctypeWithEntitiesIsRejected() {
        let e = onlyError("""
            <?xml version="1.0"?>
            <!DOCTYPE xliff [
              <!ENTITY lol "lol">
              <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
            ]>
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2">
              <file original="x" source-language="en" target-language="it" datatype="plaintext"><body>
                <trans-unit id="a"><source>&lol2;</source><target>&lol2;</target></trans-unit>
              </body></file>
            </xliff>
            """)
        #expect(e?.line == 3)
        #expect(e?.column == 3)
        #expect(e?.message.contains("DOCTYPE declares entities") == true)
        // External entities too (never fetched).
        let external = onlyError("""
            <!DOCTYPE xliff [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2"><file target-language="it"/></xliff>
            """)
        #expect(external?.line == 1)
        #expect(external?.message.contains("DOCTYPE declares entities") == true)
        // UTF-16, where the byte scan does not run: libxml2's tree is checked instead.
        var utf16: [UInt8] = [0xFF, 0xFE]
        for u in "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<!DOCTYPE xliff [<!ENTITY e \"x\">]>\n<xliff/>".utf16 {
            utf16 += [UInt8(u & 0xFF), UInt8(u >> 8)]
        }
        let wide = XLIFFFile.parse(utf16)
        #expect(wide.errors.count == 1)
        #expect(wide.errors.first?.message.contains("DOCTYPE declares entities") == true)
    }

    @Test func badCodePoint() {
        let result = parse("""
            <xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="it">
              <file id="f">
                <unit id="a"><segment><source>A</source><target>A<cp hex="zz"/></target></segment></unit>
              </file>
            </xliff>
            """)
        #expect(result.errors.map(\.line) == [3])
        #expect(result.errors.map(\.column) == [54])
        #expect(result.errors.first?.message.contains("<cp hex=\"zz\"/> is not a Unicode code point") == true)
    }
}
