import Testing

@testable import FolioCatalogs
@testable import FolioLocalization

@Suite struct XCStringsFileTests {
    func parse(_ text: String) -> ParsedCatalogFile {
        XCStringsFile.parse(Array(text.utf8))
    }

    /// The only error of `file`, as `line:column`, with its message.
    func onlyError(_ file: ParsedCatalogFile) -> (at: String, message: String)? {
        guard file.errors.count == 1, let e = file.errors.first else { return nil }
        return ("\(e.line):\(e.column)", e.message)
    }

    /// A one-line catalog holding `entries` (the members of "strings").
    func catalog(_ entries: String) -> String {
        #"{"sourceLanguage":"en","strings":{"# + entries + "}}"
    }

    static let sample = #"""
        {
          "sourceLanguage" : "en",
          "strings" : {
            "%lld sonnets" : {
              "comment" : "Number of sonnets on the shelf",
              "localizations" : {
                "en" : {
                  "variations" : {
                    "plural" : {
                      "one" : {
                        "stringUnit" : {
                          "state" : "translated",
                          "value" : "%lld sonnet"
                        }
                      },
                      "other" : {
                        "stringUnit" : {
                          "state" : "translated",
                          "value" : "%lld sonnets"
                        }
                      }
                    }
                  }
                },
                "ja" : {
                  "variations" : {
                    "plural" : {
                      "other" : {
                        "stringUnit" : {
                          "state" : "translated",
                          "value" : "ソネット%lld篇"
                        }
                      }
                    }
                  }
                }
              }
            },
            "Open" : {
              "localizations" : {
                "zh-Hans" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "打开"
                  }
                },
                "ja" : {
                  "stringUnit" : {
                    "state" : "needs_review",
                    "value" : "開く"
                  }
                }
              }
            },
            "Tap to continue" : {
              "comment" : "Onboarding hint",
              "extractionState" : "manual",
              "localizations" : {
                "en" : {
                  "variations" : {
                    "device" : {
                      "mac" : {
                        "stringUnit" : {
                          "state" : "translated",
                          "value" : "Click to continue"
                        }
                      },
                      "other" : {
                        "stringUnit" : {
                          "state" : "translated",
                          "value" : "Tap to continue"
                        }
                      }
                    }
                  }
                },
                "zh-Hans" : {
                  "variations" : {
                    "device" : {
                      "mac" : {
                        "stringUnit" : {
                          "state" : "translated",
                          "value" : "点击继续"
                        }
                      },
                      "other" : {
                        "stringUnit" : {
                          "state" : "new",
                          "value" : "轻点继续"
                        }
                      }
                    }
                  }
                }
              }
            },
            "files_in_folders" : {
              "localizations" : {
                "en" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "%#@files@ in %#@folders@"
                  },
                  "substitutions" : {
                    "files" : {
                      "argNum" : 1,
                      "formatSpecifier" : "lld",
                      "variations" : {
                        "plural" : {
                          "one" : {
                            "stringUnit" : {
                              "state" : "translated",
                              "value" : "%arg file"
                            }
                          },
                          "other" : {
                            "stringUnit" : {
                              "state" : "translated",
                              "value" : "%arg files"
                            }
                          }
                        }
                      }
                    },
                    "folders" : {
                      "argNum" : 2,
                      "formatSpecifier" : "d",
                      "variations" : {
                        "plural" : {
                          "one" : {
                            "stringUnit" : {
                              "state" : "translated",
                              "value" : "%arg folder"
                            }
                          },
                          "other" : {
                            "stringUnit" : {
                              "state" : "translated",
                              "value" : "%arg folders"
                            }
                          }
                        }
                      }
                    }
                  }
                },
                "ja" : {
                  "stringUnit" : {
                    "state" : "new",
                    "value" : ""
                  }
                }
              }
            },
            "AppName" : {
              "shouldTranslate" : false,
              "localizations" : {
                "en" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "Folio"
                  }
                },
                "ja" : {
                  "stringUnit" : {
                    "state" : "translated",
                    "value" : "フォリオ"
                  }
                }
              }
            }
          },
          "version" : "1.0"
        }
        """#

    @Test func realisticSampleSectionsInFirstAppearanceOrder() {
        let file = parse(Self.sample)
        #expect(file.errors.isEmpty)
        #expect(file.warnings.isEmpty)
        #expect(file.sourceLanguage == "en")
        #expect(file.sections.map(\.locale) == ["en", "ja", "zh-Hans"])
        #expect(file.sections.map { "\($0.line):\($0.column)" } == ["7:9", "25:9", "41:9"])
    }

    @Test func realisticSampleEnglish() throws {
        let file = parse(Self.sample)
        let en = try #require(file.sections.first { $0.locale == "en" })
        #expect(en.messages.map(\.key) == ["%lld sonnets", "Tap to continue", "files_in_folders", "AppName"])
        #expect(en.messages[0] == CatalogMessage(
            key: "%lld sonnets", value: .plural([.one: "%lld sonnet", .other: "%lld sonnets"]),
            comment: "Number of sonnets on the shelf", state: "translated", line: 7, column: 9))
        #expect(en.messages[1] == CatalogMessage(
            key: "Tap to continue",
            value: .device(["mac": .string("Click to continue"), "other": .string("Tap to continue")]),
            comment: "Onboarding hint", state: "translated", line: 59, column: 9))
        #expect(en.messages[2] == CatalogMessage(
            key: "files_in_folders",
            value: .substitutions(format: "%#@files@ in %#@folders@", variables: [
                "files": PluralSubstitution(argument: 1, formatSpecifier: "lld", variants: [.one: "%lld file", .other: "%lld files"]),
                "folders": PluralSubstitution(argument: 2, formatSpecifier: "d", variants: [.one: "%d folder", .other: "%d folders"]),
            ]),
            state: "translated", line: 102, column: 23))
        #expect(en.messages[3] == CatalogMessage(key: "AppName", value: .string("Folio"), state: "translated", line: 161, column: 23))
        #expect(en.messages.allSatisfy { $0.source == nil })
    }

    @Test func realisticSampleJapaneseAndChinese() throws {
        let file = parse(Self.sample)
        let ja = try #require(file.sections.first { $0.locale == "ja" })
        // AppName has "shouldTranslate": false, so its Japanese entry is skipped.
        #expect(ja.messages == [
            CatalogMessage(
                key: "%lld sonnets", value: .plural([.other: "ソネット%lld篇"]),
                comment: "Number of sonnets on the shelf", state: "translated", line: 25, column: 9),
            CatalogMessage(key: "Open", value: .string("開く"), source: .string("Open"), state: "needs_review", line: 50, column: 23),
            CatalogMessage(key: "files_in_folders", value: nil, state: "new", line: 147, column: 9),
        ])
        let zh = try #require(file.sections.first { $0.locale == "zh-Hans" })
        #expect(zh.messages == [
            CatalogMessage(key: "Open", value: .string("打开"), source: .string("Open"), state: "translated", line: 44, column: 23),
            // The "other" device variant is in state "new", so only "mac" is usable.
            CatalogMessage(
                key: "Tap to continue", value: .device(["mac": .string("点击继续")]), comment: "Onboarding hint",
                state: "new", line: 77, column: 9),
        ])
    }

    @Test func byteOrderMarkIsNotAColumn() {
        let file = XCStringsFile.parse([0xEF, 0xBB, 0xBF] + Array(Self.sample.utf8))
        #expect(file.errors.isEmpty)
        #expect(file == parse(Self.sample))
    }

    @Test func plainStringPositionIsItsValue() {
        let file = parse("{\n  \"sourceLanguage\" : \"en\",\n  \"strings\" : {\n    \"hi\" : { \"localizations\" : { \"fr\" : { \"stringUnit\" : { \"state\" : \"translated\", \"value\" : \"Salut\" } } } }\n  }\n}")
        #expect(file.errors.isEmpty)
        #expect(file.sections == [CatalogLocaleSection(locale: "fr", line: 4, column: 34, messages: [
            CatalogMessage(key: "hi", value: .string("Salut"), source: .string("hi"), state: "translated", line: 4, column: 94),
        ])])
    }

    @Test func newStateAndEmptyValueGiveNoValue() {
        let file = parse(catalog(#""a":{"localizations":{"en":{"stringUnit":{"state":"new","value":"A"}}}},"b":{"localizations":{"en":{"stringUnit":{"state":"translated","value":""}}}},"c":{"localizations":{"en":{"stringUnit":{"value":"C"}}}}"#))
        #expect(file.errors.isEmpty)
        let messages = file.sections.first?.messages ?? []
        #expect(messages.map(\.key) == ["a", "b", "c"])
        #expect(messages.map(\.value) == [nil, nil, .string("C")])
        #expect(messages.map(\.state) == ["new", "translated", nil])
    }

    @Test func shouldTranslateFalseKeepsOnlySourceLanguage() {
        let file = parse(catalog(#""x":{"shouldTranslate":false,"localizations":{"de":{"stringUnit":{"state":"translated","value":"X"}},"en":{"stringUnit":{"state":"translated","value":"X"}}}}"#))
        #expect(file.errors.isEmpty)
        #expect(file.sections.map(\.locale) == ["en"])
        #expect(file.sections.first?.messages.map(\.key) == ["x"])
    }

    @Test func keysWithoutLocalizationsYieldNothing() {
        let file = parse(catalog(#""x":{"extractionState":"stale"},"y":{"comment":"c","localizations":{}}"#))
        #expect(file.errors.isEmpty)
        #expect(file.sections.isEmpty)
        #expect(file.sourceLanguage == "en")
    }

    @Test func deviceVariationWithNestedPlural() {
        let file = parse(catalog(#""n":{"localizations":{"en":{"variations":{"device":{"iphone":{"variations":{"plural":{"one":{"stringUnit":{"state":"translated","value":"%lld tap"}},"other":{"stringUnit":{"state":"translated","value":"%lld taps"}}}}},"other":{"stringUnit":{"state":"translated","value":"%lld clicks"}}}}}}}"#))
        #expect(file.errors.isEmpty)
        #expect(file.sections.first?.messages.first?.value == .device([
            "iphone": .plural([.one: "%lld tap", .other: "%lld taps"]), "other": .string("%lld clicks"),
        ]))
    }

    @Test func substitutionWithoutArgNumAndPositionalToken() {
        let file = parse(catalog(#""k":{"localizations":{"en":{"stringUnit":{"state":"translated","value":"%@ has %2$#@n@"},"substitutions":{"n":{"formatSpecifier":"u","variations":{"plural":{"other":{"stringUnit":{"state":"translated","value":"%arg items"}}}}}}}}}"#))
        #expect(file.errors.isEmpty)
        #expect(file.sections.first?.messages.first?.value == .substitutions(
            format: "%@ has %2$#@n@",
            variables: ["n": PluralSubstitution(argument: 2, formatSpecifier: "u", variants: [.other: "%u items"])]))
    }

    @Test func unusedSubstitutionIsAWarning() {
        let file = parse(catalog(#""k":{"localizations":{"en":{"stringUnit":{"state":"translated","value":"plain"},"substitutions":{"n":{"formatSpecifier":"d","variations":{"plural":{"other":{"stringUnit":{"value":"x"}}}}}}}}}"#))
        #expect(file.errors.isEmpty)
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.message.contains("substitution \"n\"") == true)
        #expect(file.sections.first?.messages.first?.value == .string("plain"))
    }

    // MARK: Errors

    @Test func invalidJSONTrailingComma() {
        let file = parse(#"{"sourceLanguage":"en","strings":{"a":{},}}"#)
        #expect(file.sections.isEmpty)
        let e = onlyError(file)
        #expect(e?.at == "1:42")
        #expect(e?.message == "invalid JSON: expected a string key; fix the syntax at this position")
    }

    @Test func invalidJSONUnterminatedString() {
        let e = onlyError(parse(#"{"sourceLanguage":"en","strings":{"a"#))
        #expect(e?.at == "1:35")
        #expect(e?.message.contains("unterminated string") == true)
    }

    @Test func invalidJSONOnALaterLine() {
        let e = onlyError(parse("{\n  \"strings\" : {\n    \"a\" : tru\n  }\n}"))
        #expect(e?.at == "3:11")
        #expect(e?.message.hasPrefix("invalid JSON: expected a value") == true)
    }

    @Test func invalidJSONEmptyInput() {
        let e = onlyError(parse(""))
        #expect(e?.at == "1:1")
        #expect(e?.message.contains("unexpected end of input") == true)
    }

    @Test func nestingLimit() {
        let e = onlyError(parse(String(repeating: "[", count: 2000) + String(repeating: "]", count: 2000)))
        #expect(e?.at == "1:513")
        #expect(e?.message == "invalid JSON: values nest deeper than 512 levels; fix the syntax at this position")
    }

    @Test func rootNotAnObject() {
        let e = onlyError(parse("[1]"))
        #expect(e?.at == "1:1")
        #expect(e?.message == "the root of a .xcstrings file must be an object, found an array; change it to an object")
    }

    @Test func stringsNotAnObject() {
        let e = onlyError(parse(#"{"sourceLanguage":"en","strings":[]}"#))
        #expect(e?.at == "1:34")
        #expect(e?.message == "\"strings\" must be an object, found an array; change it to an object")
    }

    @Test func missingSourceLanguageAndStrings() {
        let file = parse("{}")
        #expect(file.errors.count == 2)
        #expect(file.errors.allSatisfy { $0.line == 1 && $0.column == 1 })
        #expect(file.errors.contains { $0.message.contains("no \"sourceLanguage\"") })
        #expect(file.errors.contains { $0.message.contains("no \"strings\"") })
    }

    @Test func wrongValueType() {
        let file = parse(catalog(#""k":{"localizations":{"en":{"stringUnit":{"state":"translated","value":42}}}}"#))
        let e = onlyError(file)
        #expect(e?.at == "1:106")
        #expect(e?.message.contains("\"value\" of the stringUnit of the \"en\" localization of \"k\" must be a string, found a number") == true)
        #expect(file.sections.isEmpty)
    }

    /// Issue #39: a catalog has no null message; each null is an error at its position that
    /// names the key it stands under.
    @Test func nullsNameTheirKey() {
        let file = parse(catalog(#""k":{"localizations":{"en":{"stringUnit":{"state":"translated","value":null}}}},"gone":null"#))
        #expect(file.errors.map { "\($0.line):\($0.column)" } == ["1:106", "1:122"])
        #expect(file.errors.first?.message.contains("\"value\" of the stringUnit of the \"en\" localization of \"k\" must be a string, found null") == true)
        #expect(file.errors.last?.message.contains("\"gone\"") == true)
        #expect(file.errors.last?.message.contains("found null") == true)
        #expect(file.sections.allSatisfy { $0.messages.isEmpty })
    }

    @Test func wrongShouldTranslateAndCommentTypes() {
        let file = parse(catalog(#""k":{"comment":7,"shouldTranslate":"no"}"#))
        #expect(file.errors.map { "\($0.line):\($0.column)" } == ["1:50", "1:70"])
        #expect(file.errors.first?.message.contains("\"comment\" of the entry \"k\" must be a string") == true)
        #expect(file.errors.last?.message.contains("must be true or false") == true)
    }

    @Test func unknownPluralCategory() {
        let file = parse(catalog(#""k":{"localizations":{"en":{"variations":{"plural":{"several":{"stringUnit":{"state":"translated","value":"x"}},"other":{"stringUnit":{"state":"translated","value":"y"}}}}}}}"#))
        let e = onlyError(file)
        #expect(e?.at == "1:87")
        #expect(e?.message == "unknown plural category \"several\" in the \"en\" localization of \"k\"; use zero, one, two, few, many or other")
        #expect(file.sections.first?.messages.isEmpty ?? true)
    }

    @Test func tokenWithoutSubstitution() {
        let e = onlyError(parse(catalog(#""k":{"localizations":{"en":{"stringUnit":{"state":"translated","value":"%#@n@ left"}}}}"#)))
        #expect(e?.at == "1:106")
        #expect(e?.message.contains("uses %#@n@, but there is no substitution \"n\"") == true)
    }

    @Test func substitutionWithoutPluralVariations() {
        let e = onlyError(parse(catalog(#""k":{"localizations":{"en":{"stringUnit":{"state":"translated","value":"%#@n@ left"},"substitutions":{"n":{"formatSpecifier":"lld"}}}}}"#)))
        #expect(e?.at == "1:137")
        #expect(e?.message.hasPrefix("substitution \"n\" of the \"en\" localization of \"k\" has no plural variations") == true)
    }

    @Test func duplicateKeysNameBothPositions() {
        let file = parse(#"{"sourceLanguage":"en","strings":{"k":{},"k":{}}}"#)
        let e = onlyError(file)
        #expect(e?.at == "1:42")
        #expect(e?.message == "duplicate key \"k\" at 1:42; it is already defined at 1:35 in the same object; remove or merge one of them")
    }

    @Test func duplicateKeysOnDifferentLines() {
        let e = onlyError(parse("{\n  \"sourceLanguage\" : \"en\",\n  \"sourceLanguage\" : \"fr\",\n  \"strings\" : {}\n}"))
        #expect(e?.at == "3:3")
        #expect(e?.message.contains("at 3:3; it is already defined at 2:3") == true)
    }

    @Test func stringUnitAndVariationsTogether() {
        let e = onlyError(parse(catalog(#""k":{"localizations":{"en":{"stringUnit":{"value":"a"},"variations":{"plural":{"other":{"stringUnit":{"value":"b"}}}}}}}"#)))
        #expect(e?.message.contains("has both \"stringUnit\" and \"variations\"") == true)
    }

    @Test func unsupportedVariationKind() {
        let e = onlyError(parse(catalog(#""k":{"localizations":{"en":{"variations":{"width":{}}}}}"#)))
        #expect(e?.message == "unsupported variation \"width\" in the \"en\" localization of \"k\"; use \"plural\" or \"device\"")
    }

    @Test func errorsInOneLocaleDoNotDropOthers() {
        let file = parse(catalog(#""k":{"localizations":{"de":{"stringUnit":{"value":7}},"fr":{"stringUnit":{"value":"oui"}}}}"#))
        #expect(file.errors.count == 1)
        #expect(file.sections.map(\.locale) == ["fr"])
        #expect(file.sections.first?.messages.first?.value == .string("oui"))
    }
}
