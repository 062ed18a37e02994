#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import FolioTestSupport
import Testing

@testable import FolioLocalization

@Suite struct FormatSpecifierTests {
    typealias Spec = FormatSpecifier

    func parse(_ s: String) throws -> [FormatSpecifier] { try FormatSpecifier.parse(s) }

    /// The error `parse` throws for `s`, or nil when it parses.
    func parseError(_ s: String) -> FormatSpecifierError? {
        do throws(FormatSpecifierError) {
            _ = try FormatSpecifier.parse(s)
            return nil
        } catch {
            return error
        }
    }

    /// The error `arguments` throws for `s`, or nil when it resolves.
    func argumentsError(_ s: String, allowGaps: Bool = false) throws -> FormatSpecifierError? {
        let specs = try FormatSpecifier.parse(s)
        do throws(FormatSpecifierError) {
            _ = try FormatSpecifier.arguments(specs, allowGaps: allowGaps)
            return nil
        } catch {
            return error
        }
    }

    func arguments(_ s: String) throws -> [Int: FormatSpecifier.Kind] {
        try FormatSpecifier.arguments(FormatSpecifier.parse(s))
    }

    func compare(_ source: String, _ translation: String, allowFewer: Bool = false) -> FormatMismatch? {
        FormatSpecifier.compare(source: source, translation: translation, allowFewer: allowFewer)
    }

    func format(_ template: String, _ args: FormatArgument...) -> String { FormatSpecifier.format(template, args) }

    /// What the C library's `vsnprintf` makes of `template` with `args`.
    func cFormat(_ template: String, _ args: [any CVarArg]) -> String {
        var buffer = [CChar](repeating: 0, count: 1024)
        let written = withVaList(args) { list in
            buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, template, list) }
        }
        return String(decoding: buffer[..<Int(written)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Parsing

    @Test func parsesEveryConversionWithItsKind() throws {
        let expected: [(String, FormatSpecifier.Kind)] = [
            ("d", .int), ("i", .int), ("u", .int), ("o", .int), ("x", .int), ("X", .int),
            ("c", .char), ("C", .char), ("s", .cString), ("S", .wideString), ("p", .pointer),
            ("f", .double), ("F", .double), ("e", .double), ("E", .double), ("g", .double), ("G", .double),
            ("a", .double), ("A", .double), ("@", .object),
        ]
        for (conversion, kind) in expected {
            let specs = try parse("x %\(conversion) y")
            #expect(specs == [Spec(text: "%\(conversion)", offset: 2, conversion: Character(conversion))])
            #expect(specs.first?.kind == kind, "%\(conversion)")
        }
    }

    @Test func parsesLengthModifiers() throws {
        let expected: [(String, FormatSpecifier.Kind)] = [
            ("hhd", .int), ("hd", .int), ("hhx", .int), ("hu", .int), ("ld", .int64), ("lld", .int64),
            ("qd", .int64), ("zu", .int64), ("td", .int64), ("jd", .int64), ("llx", .int64), ("lu", .int64),
            ("lf", .double), ("Lf", .longDouble), ("Lg", .longDouble), ("lc", .char), ("ls", .wideString),
        ]
        for (text, kind) in expected {
            let spec = try #require(parse("%" + text).first)
            #expect(spec.length == String(text.dropLast()), "%\(text)")
            #expect(spec.conversion == text.last)
            #expect(spec.kind == kind, "%\(text)")
            #expect(spec.text == "%" + text)
        }
    }

    @Test func parsesFlagsWidthPrecisionAndPositions() throws {
        #expect(
            try parse("%-+ #0'8.3lld")
                == [Spec(text: "%-+ #0'8.3lld", offset: 0, flags: "-+ #0'", width: "8", precision: "3", length: "ll", conversion: "d")])
        #expect(try parse("%05d") == [Spec(text: "%05d", offset: 0, flags: "0", width: "5", conversion: "d")])
        #expect(try parse("%10$d") == [Spec(text: "%10$d", offset: 0, argument: 10, conversion: "d")])
        #expect(try parse("%1$05.2f") == [Spec(text: "%1$05.2f", offset: 0, argument: 1, flags: "0", width: "5", precision: "2", conversion: "f")])
        #expect(try parse("%.f") == [Spec(text: "%.f", offset: 0, precision: "", conversion: "f")])
        #expect(try parse("%.f").first?.precisionAmount == .fixed(0))
        #expect(try parse("%5d").first?.widthAmount == .fixed(5))
        #expect(try parse("%d").first?.widthAmount == nil)
        #expect(try parse("%d").first?.precisionAmount == nil)
    }

    @Test func parsesStarWidthsAndPrecisions() throws {
        let star = try #require(parse("%*.*f").first)
        #expect(star == Spec(text: "%*.*f", offset: 0, width: "*", precision: "*", conversion: "f"))
        #expect(star.widthAmount == .nextArgument)
        #expect(star.precisionAmount == .nextArgument)
        let positional = try #require(parse("%1$*2$.*3$d").first)
        #expect(positional == Spec(text: "%1$*2$.*3$d", offset: 0, argument: 1, width: "*2$", precision: "*3$", conversion: "d"))
        #expect(positional.widthAmount == .argument(2))
        #expect(positional.precisionAmount == .argument(3))
    }

    @Test func skipsPercentPercentAndCountsOffsetsInCharacters() throws {
        #expect(try parse("100%% sure").isEmpty)
        #expect(try parse("%%d") == [])
        #expect(try parse("%%%d") == [Spec(text: "%d", offset: 2, conversion: "d")])
        #expect(try parse("%d%% of %@") == [Spec(text: "%d", offset: 0, conversion: "d"), Spec(text: "%@", offset: 8, conversion: "@")])
        // "é" (two scalars here), an emoji and a flag are one Character each.
        #expect(try parse("e\u{301}😀🇫🇷 %@").first?.offset == 4)
        #expect(try parse("").isEmpty)
        #expect(try parse("no specifiers").isEmpty)
    }

    @Test func parsesPluralVariables() throws {
        let specs = try parse("%#@files@ in %1$#@lu_folders@")
        #expect(
            specs == [
                Spec(text: "%#@files@", offset: 0, flags: "#", conversion: "@", variable: "files"),
                Spec(text: "%1$#@lu_folders@", offset: 13, argument: 1, flags: "#", conversion: "@", variable: "lu_folders"),
            ])
        #expect(specs.map(\.kind) == [.variable, .variable])
        // A variable consumes an argument like any other specifier.
        #expect(try arguments("%#@files@ %@") == [1: .variable, 2: .object])
        #expect(try parse("%@").first?.variable == nil)
    }

    @Test func rejectsInvalidSpecifiersWithOffsets() {
        let cases: [(String, Int, String)] = [
            ("100%", 3, "incomplete format specifier \"%\" at the end of the string"),
            ("ab %y", 3, "invalid conversion \"y\" in \"%y\""),
            ("%1$", 0, "incomplete format specifier \"%1$\" at the end of the string"),
            ("x %-5.2l", 2, "incomplete format specifier \"%-5.2l\" at the end of the string"),
            ("%0$d", 0, "argument positions start at 1 in \"%0$\""),
            ("%*0$d", 0, "argument positions start at 1 in \"%*0$\""),
            ("%hf", 0, "the length modifier \"h\" cannot be used with %f in \"%hf\""),
            ("%l@", 0, "the length modifier \"l\" cannot be used with %@ in \"%l@\""),
            ("%Ld", 0, "the length modifier \"L\" cannot be used with %d in \"%Ld\""),
            ("%lp", 0, "the length modifier \"l\" cannot be used with %p in \"%lp\""),
            ("%n", 0, "\"%n\" is not allowed: %n writes to memory"),
            ("%#@files", 0, "unterminated plural variable \"%#@files\": expected \"@\" after the name"),
            ("%#@files and more", 0, "unterminated plural variable \"%#@files\": expected \"@\" after the name"),
            ("%#@@", 0, "empty plural variable name in \"%#@@\""),
            ("%-#@a@", 0, "a plural variable takes no flags, width or precision in \"%-#@a@\"; write %#@name@"),
            ("%99999d", 0, "a number in \"%99999\" is larger than 9999"),
            ("%10000$d", 0, "a number in \"%10000$\" is larger than 9999"),
            ("%*5d", 0, "expected \"$\" after the argument position in \"%*5d\""),
            ("%5%", 0, "invalid conversion \"%\" in \"%5%\""),
            ("é😀%é", 2, "invalid conversion \"é\" in \"%é\""),
            ("%\n", 0, "invalid conversion \"\\n\" in \"%\\n\""),
            ("%d ok, %k", 7, "invalid conversion \"k\" in \"%k\""),
        ]
        for (text, offset, message) in cases {
            #expect(parseError(text) == FormatSpecifierError(offset: offset, message: message), "\(text)")
        }
        #expect(parseError("%9999d") == nil)
        #expect(FormatSpecifierError(offset: 3, message: "m").description == "offset 3: m")
    }

    // MARK: - Arguments

    @Test func sequentialArgumentsTakeTheNextIndex() throws {
        #expect(try arguments("%d %@ %s %f %ld %c %p %S %Lf") == [
            1: .int, 2: .object, 3: .cString, 4: .double, 5: .int64, 6: .char, 7: .pointer, 8: .wideString,
            9: .longDouble,
        ])
        #expect(try arguments("%*.*f %-*s") == [1: .int, 2: .int, 3: .double, 4: .int, 5: .cString])
        #expect(try arguments("no arguments %%") == [:])
    }

    @Test func positionalArgumentsTakeTheirIndex() throws {
        #expect(try arguments("%2$@ %1$d") == [1: .int, 2: .object])
        #expect(try arguments("%1$@ %1$@ %2$d") == [1: .object, 2: .int])
        #expect(try arguments("%1$*2$.*3$f") == [1: .double, 2: .int, 3: .int])
        #expect(try arguments("%1$d %1$u %1$x") == [1: .int])
    }

    @Test func mixingPositionalAndSequentialIsAnError() throws {
        #expect(
            try argumentsError("%1$d %@")
                == FormatSpecifierError(
                    offset: 5,
                    message: "%@ takes the next argument but %1$d gives a position; use positions in every specifier or in none"))
        #expect(
            try argumentsError("%d and %2$@")
                == FormatSpecifierError(
                    offset: 7,
                    message: "%d takes the next argument but %2$@ gives a position; use positions in every specifier or in none"))
        // A sequential `*` inside a positional specifier mixes too.
        #expect(try argumentsError("%1$*d")?.offset == 0)
    }

    @Test func gapsInPositionsAreAnError() throws {
        #expect(
            try argumentsError("%1$d %3$@")
                == FormatSpecifierError(
                    offset: 5, message: "argument 2 is never used although %3$@ uses argument 3; positions cannot skip an argument"))
        #expect(try argumentsError("%2$d")?.message.hasPrefix("argument 1 is never used") == true)
        #expect(try argumentsError("%1$d %3$@", allowGaps: true) == nil)
        #expect(try FormatSpecifier.arguments(parse("%3$@"), allowGaps: true) == [3: .object])
    }

    @Test func conflictingKindsForOneArgumentAreAnError() throws {
        #expect(
            try argumentsError("%1$d %1$@")
                == FormatSpecifierError(offset: 5, message: "argument 1 is used both as %1$d and as %1$@"))
        #expect(
            try argumentsError("%2$f %1$*2$d")
                == FormatSpecifierError(offset: 5, message: "argument 2 is used both as %2$f and as the * width of %1$*2$d"))
        #expect(
            try argumentsError("%1$d %1$ld")
                == FormatSpecifierError(offset: 5, message: "argument 1 is used both as %1$d and as %1$ld"))
    }

    // MARK: - Compare

    @Test func compatibleTranslations() {
        #expect(compare("%d sonnets", "%d Sonette") == nil)
        #expect(compare("%d %@", "%2$@ %1$d") == nil)
        #expect(compare("%1$@ wrote %2$d", "%2$d by %1$@") == nil)
        #expect(compare("%d", "%i") == nil)
        #expect(compare("%d", "%u") == nil)
        #expect(compare("%x", "%o") == nil)
        #expect(compare("%hd", "%d") == nil)
        #expect(compare("%ld", "%lld") == nil)
        #expect(compare("%qd", "%zu") == nil)
        #expect(compare("%f", "%g") == nil)
        #expect(compare("%.2f", "%e") == nil)
        #expect(compare("%lf", "%f") == nil)
        #expect(compare("%c", "%C") == nil)
        #expect(compare("%d", "%1$d and again %1$d") == nil)
        #expect(compare("%*d", "%d%d") == nil)
        #expect(compare("%#@files@", "%#@files@") == nil)
        #expect(compare("no format", "kein Format 100%%") == nil)
    }

    @Test func kindMismatchMessages() {
        #expect(
            compare("%d sonnets", "%@ Sonette")
                == FormatMismatch(message: "the translation uses %@ for argument 1 where the source uses %d", offset: 0))
        #expect(
            compare("%d", "%ld")
                == FormatMismatch(message: "the translation uses %ld for argument 1 where the source uses %d", offset: 0))
        #expect(
            compare("%lld", "%d")?.message == "the translation uses %d for argument 1 where the source uses %lld")
        #expect(compare("%qd", "%d") != nil)
        #expect(
            compare("%@", "%s") == FormatMismatch(message: "the translation uses %s for argument 1 where the source uses %@", offset: 0))
        #expect(compare("%s", "%S") != nil)
        #expect(compare("%d", "%f") != nil)
        #expect(compare("%f", "%Lf") != nil)
        #expect(compare("%c", "%d") != nil)
        #expect(compare("%p", "%lx") != nil)
        #expect(
            compare("%d of %@", "von %2$d: %1$d")
                == FormatMismatch(message: "the translation uses %2$d for argument 2 where the source uses %@", offset: 4))
        #expect(
            compare("%*d", "%f %d")
                == FormatMismatch(
                    message: "the translation uses %f for argument 1 where the source uses the * width of %*d", offset: 0))
        #expect(compare("%#@files@", "%d") != nil)
    }

    @Test func countAndMissingMessages() {
        #expect(
            compare("%d %d", "%d %d %d")
                == FormatMismatch(message: "the translation has 3 arguments, the source has 2", offset: 6))
        #expect(
            compare("%d", "%1$d %2$@")
                == FormatMismatch(message: "the translation has 2 arguments, the source has 1", offset: 5))
        #expect(
            compare("plain", "%@") == FormatMismatch(message: "the translation has 1 argument, the source has 0", offset: 0))
        #expect(
            compare("%d by %@", "%d")
                == FormatMismatch(message: "argument 2 (%@) is missing from the translation", offset: nil, isOmission: true))
        #expect(
            compare("%d by %@", "von %2$@")
                == FormatMismatch(message: "argument 1 (%d) is missing from the translation", offset: nil, isOmission: true))
        #expect(compare("%d", "none")?.message == "argument 1 (%d) is missing from the translation")
        #expect(
            compare("%*d", "%2$d")?.message == "argument 1 (the * width of %*d) is missing from the translation")
    }

    @Test func invalidFormatsAreMismatches() {
        #expect(
            compare("%d", "%d %y")
                == FormatMismatch(
                    message: "the translation has an invalid format specifier: invalid conversion \"y\" in \"%y\"", offset: 3))
        #expect(
            compare("%d", "%1$d %@")
                == FormatMismatch(
                    message:
                        "the translation has an invalid format specifier: %@ takes the next argument but %1$d gives a position; use positions in every specifier or in none",
                    offset: 5))
        #expect(
            compare("%d", "%1$d %1$@")?.message
                == "the translation has an invalid format specifier: argument 1 is used both as %1$d and as %1$@")
        #expect(
            compare("50%", "50 %d")
                == FormatMismatch(
                    message: "the source has an invalid format specifier: incomplete format specifier \"%\" at the end of the string"))
        #expect(compare("%2$d", "%2$d")?.message.hasPrefix("the source has an invalid format specifier: argument 1") == true)
        #expect(FormatMismatch(message: "m", offset: 2).description == "offset 2: m")
        #expect(FormatMismatch(message: "m").description == "m")
    }

    @Test func allowFewerPermitsOmittingButNotChanging() {
        #expect(compare("%d sonnets by %@", "one sonnet by %2$@", allowFewer: true) == nil)
        #expect(compare("%d sonnets", "one sonnet", allowFewer: true) == nil)
        #expect(compare("%d sonnets", "one sonnet") == FormatMismatch(message: "argument 1 (%d) is missing from the translation", isOmission: true))
        #expect(compare("%d sonnets by %@", "%d sonnet", allowFewer: true) == nil)
        #expect(
            compare("%d sonnets", "%@ sonnet", allowFewer: true)
                == FormatMismatch(message: "the translation uses %@ for argument 1 where the source uses %d", offset: 0))
        #expect(
            compare("%d sonnets", "%d sonnet %@", allowFewer: true)
                == FormatMismatch(message: "the translation has 2 arguments, the source has 1", offset: 10))
        #expect(compare("%d sonnets", "%2$@", allowFewer: true)?.message == "the translation has 2 arguments, the source has 1")
    }

    // MARK: - Formatting

    @Test func integersMatchC() {
        let template = "%d|%5d|%-5d|%05d|%+d|% d|%.3d|%8.3d|%-8.3d|%08.3d|%i|%+05d|%-+6d|"
        for value: Int32 in [0, 7, 42, -42, 12345, -1, Int32.max, Int32.min] {
            let count = 13
            #expect(
                FormatSpecifier.format(template, Array(repeating: .int(Int64(value)), count: count))
                    == cFormat(template, Array(repeating: value, count: count)), "\(value)")
        }
        let hex = "%x|%X|%#x|%#X|%o|%#o|%u|%.0d|%.0x|%#.0o|%08x|%-#8x|%#010x|%+u|% x|%.4x"
        for value: Int32 in [0, 8, 255, 0x7FFF_FFFF, -1, -255] {
            #expect(
                FormatSpecifier.format(hex, Array(repeating: .int(Int64(value)), count: 16))
                    == cFormat(hex, Array(repeating: value, count: 16)), "\(value)")
        }
    }

    @Test func lengthModifiersMatchC() {
        let wide = "%lld|%lli|%llx|%llX|%llo|%llu|%ld|%lu|%qd|%jd|%zd|%td|%25lld|%-25lld|%025lld"
        for value: Int64 in [0, 1, -1, Int64.min, Int64.max, 5_000_000_000, -5_000_000_000] {
            #expect(
                FormatSpecifier.format(wide, Array(repeating: .int(value), count: 15))
                    == cFormat(wide, Array(repeating: value, count: 15)), "\(value)")
        }
        #expect(format("%lld", .int(.min)) == "-9223372036854775808")
        #expect(format("%llx", .int(.min)) == "8000000000000000")
        let short = "%hd|%hhd|%hu|%hhu|%hx|%hhx"
        for value: Int32 in [0, 300, 70000, -1, -129, 65535, 128] {
            #expect(
                FormatSpecifier.format(short, Array(repeating: .int(Int64(value)), count: 6))
                    == cFormat(short, Array(repeating: value, count: 6)), "\(value)")
        }
    }

    @Test func randomIntegerSpecifiersMatchC() {
        var random = SplitMix64(seed: 0xF0_1105)
        let conversions: [Character] = ["d", "i", "u", "x", "X", "o"]
        for _ in 0..<2_000 {
            var spec = "%"
            for flag in ["-", "+", " ", "#", "0"] where random.chance(0.25) { spec += flag }
            if random.chance(0.6) { spec += String(random.int(1...24)) }
            if random.chance(0.4) { spec += "." + String(random.int(0...12)) }
            let wide = random.chance(0.5)
            if wide { spec += random.pick(["l", "ll", "q", "j", "z"]) }
            spec.append(random.pick(conversions))
            if spec.contains("#") && (spec.hasSuffix("d") || spec.hasSuffix("i") || spec.hasSuffix("u")) { continue }
            let template = "[\(spec)]"
            if wide {
                let value = Int64(bitPattern: random.next()) >> random.int(0...63)
                #expect(FormatSpecifier.format(template, [.int(value)]) == cFormat(template, [value]), "\(template) \(value)")
            } else {
                let value = Int32(truncatingIfNeeded: Int64(bitPattern: random.next()) >> random.int(0...63))
                #expect(
                    FormatSpecifier.format(template, [.int(Int64(value))]) == cFormat(template, [value]),
                    "\(template) \(value)")
            }
        }
    }

    @Test func floatingPointMatchesC() {
        let template = "%5.2f|%f|%.0f|%e|%E|%g|%G|%.3e|%-10.1f|%+.1f|%#g|%010.3f|%.10g|%F|%lf|%.f"
        for value in [0.0, -0.0, 3.14159, -2.5, 1e20, 1e-7, 123456789.125, Double.infinity, -Double.infinity] {
            #expect(
                FormatSpecifier.format(template, Array(repeating: .double(value), count: 16))
                    == cFormat(template, Array(repeating: value, count: 16)), "\(value)")
        }
        #expect(format("%5.2f", .double(3.14159)) == " 3.14")
        #expect(format("%.2f", .double(2.675)) == cFormat("%.2f", [2.675]))
        #expect(format("%f", .double(.nan)) == "nan")
        #expect(format("%.3f", .int(2)) == "2.000")
        #expect(format("%.500f", .double(1)).count == 502)
        #expect(format("%Lf", .double(1.5)) == "1.500000")
    }

    @Test func stringsAndCharacters() {
        #expect(format("%-5s|", .string("ab")) == "ab   |")
        #expect(format("%-5s|", .string("ab")) == "ab".withCString { cFormat("%-5s|", [$0]) })
        #expect(format("%5s|%.1s|%5.3s|", .string("ab"), .string("ab"), .string("abcdef")) == "   ab|a|  abc|")
        #expect(format("%@ wrote %@", .string("Shakespeare"), .string("sonnets")) == "Shakespeare wrote sonnets")
        #expect(format("%S|%ls", .string("x"), .string("y")) == "x|y")
        // Widths count Characters, so non-ASCII text lines up.
        #expect(format("%-4@|%4s|", .string("é😀"), .string("🇫🇷")) == "é😀  |   🇫🇷|")
        #expect(format("%c%c%C|%3c|%-3c|", .int(72), .int(105), .int(0x1F600), .int(65), .int(66)) == "Hi😀|  A|B  |")
        #expect(format("%c", .int(0xD800)) == "\u{FFFD}")
        #expect(format("%c", .int(-1)) == "\u{FFFD}")
        #expect(format("%p", .int(255)) == "0xff")
    }

    @Test func mismatchedArgumentsRenderSensibly() {
        #expect(format("%@ files", .int(3)) == "3 files")
        #expect(format("%s|%@", .int(-7), .double(2.5)) == "-7|2.5")
        #expect(format("%@", .double(3)) == "3")
        #expect(format("%d sonnets", .string("three")) == "three sonnets")
        #expect(format("%5d|", .string("ab")) == "   ab|")
        #expect(format("%f", .string("x")) == "x")
        #expect(format("%d|%x", .double(2.9), .double(-1.9)) == "2|ffffffff")
        #expect(format("%d", .double(.infinity)) == "inf")
        #expect(format("%d", .int(5_000_000_000)) == "5000000000")
        #expect(format("%u", .int(5_000_000_000)) == "5000000000")
    }

    @Test func positionalArgumentsReorder() {
        #expect(format("%2$@ von %1$@", .string("Sonette"), .string("Shakespeare")) == "Shakespeare von Sonette")
        #expect(format("%2$d %1$d %2$d", .int(1), .int(2)) == "2 1 2")
        #expect(format("%2$d %1$d %2$d", .int(1), .int(2)) == cFormat("%2$d %1$d %2$d", [Int32(1), Int32(2)]))
        #expect(format("%1$*2$d|%1$-*2$d|", .int(5), .int(4)) == "   5|5   |")
        #expect(format("%1$.*2$f", .double(3.14159), .int(2)) == "3.14")
    }

    @Test func starWidthsAndPrecisions() {
        let template = "%*d|%-*d|%.*f|%*.*f|%*d|%.*d"
        #expect(
            format(template, .int(6), .int(42), .int(-6), .int(42), .int(2), .double(2.5), .int(8), .int(3), .double(-1.5), .int(-4), .int(7), .int(-1), .int(9))
                == cFormat(
                    template,
                    [Int32(6), Int32(42), Int32(-6), Int32(42), Int32(2), 2.5, Int32(8), Int32(3), -1.5, Int32(-4), Int32(7), Int32(-1), Int32(9)]))
        #expect(format("%*d", .string("wide"), .int(1)) == "%*d")
        #expect(format("%*d|", .int(1_000_000), .int(1)).count == FormatSpecifier.maximumNumber + 1)
    }

    @Test func missingArgumentsAndInvalidSpecifiersStayAsWritten() {
        #expect(format("%d of %d", .int(1)) == "1 of %d")
        #expect(format("%d %@") == "%d %@")
        #expect(format("%3$@ %1$@", .string("a")) == "%3$@ a")
        #expect(format("%*d", .int(4)) == "%*d")
        #expect(format("%.*f", .int(2)) == "%.*f")
        #expect(format("100%% sure, 100%", .int(1)) == "100% sure, 100%")
        // As in C, "% s" is a specifier (the space flag and %s), so a lone % before text can consume an argument.
        #expect(format("100% sure", .string("X")) == "100Xure")
        #expect(format("%y %d %q", .int(1)) == "%y 1 %q")
        #expect(format("%n %d", .int(1)) == "%n 1")
        #expect(format("%", .int(1)) == "%")
        #expect(format("%1$", .int(1)) == "%1$")
        #expect(format("") == "")
        #expect(format("é😀 no specifiers") == "é😀 no specifiers")
        #expect(format("%%") == "%")
    }

    @Test func pluralVariablesStayButConsumeTheirArgument() {
        #expect(format("%#@files@ in %@", .int(3), .string("Docs")) == "%#@files@ in Docs")
        #expect(format("%1$#@files@ %2$@", .int(3), .string("x")) == "%1$#@files@ x")
    }
}
