import FolioPlist
import Foundation

/// Edits of the app data: app/home.yaml (checked by schemas/home.schema.json) and
/// app/settings.json (no schema).
extension ContentEdits {
    mutating func homeValue() -> String {
        var sections = home["sections"]?.arrayValue ?? []
        switch rng.int(0...3) {
        case 0: home = home.setting("title", .string("Sonnets \(counter)"))
        case 1: home = home.setting("updatedAt", .date(Date(timeIntervalSince1970: 1_795_597_200 + Double(counter) * 3600)))
        case 2:
            let i = rng.int(0...(sections.count - 1))
            sections[i] = sections[i].setting("title", .string("Section \(counter)"))
        default:
            let i = rng.int(0...(sections.count - 1))
            sections[i] = sections[i].setting("style", .string(rng.pick(["carousel", "list", "grid"])))
        }
        home = home.setting("sections", .array(sections))
        return "home: a value"
    }

    mutating func homeSections() -> String {
        var sections = home["sections"]?.arrayValue ?? []
        let fresh = PlistValue.dict(["title": .string("New \(counter)"), "style": .string("grid"), "sonnets": .array([.int(Int64(counter))])])
        let op = arrayEdit(&sections, minCount: 1, fresh: fresh)
        home = home.setting("sections", .array(sections))
        return "home: sections \(op)"
    }

    mutating func homeSonnets() -> String {
        var sections = home["sections"]?.arrayValue ?? []
        let i = rng.int(0...(sections.count - 1))
        var numbers = sections[i]["sonnets"]?.arrayValue ?? []
        let op = arrayEdit(&numbers, minCount: 0, fresh: .int(Int64(rng.int(1...100))))
        sections[i] = sections[i].setting("sonnets", .array(numbers))
        home = home.setting("sections", .array(sections))
        return "home: sections[\(i)].sonnets \(op)"
    }

    mutating func homeKey() -> String {
        if rng.chance(0.5) {
            home = home.setting("subtitle", home["subtitle"] == nil ? .string("Subtitle \(counter)") : nil)
            return "home: subtitle toggled"
        }
        let hero = home["hero"] ?? .dict([:])
        home = home.setting("hero", hero.setting("caption", hero["caption"] == nil ? .string("Caption \(counter)") : nil))
        return "home: hero.caption toggled"
    }

    mutating func settingsLocales() -> String {
        var locales = settings["locales"]?.arrayValue ?? []
        var op = "change"
        if rng.chance(0.3), !locales.isEmpty {
            locales[rng.int(0...(locales.count - 1))] = .string("x\(counter)")
        } else {
            op = arrayEdit(&locales, minCount: 0, fresh: .string("l\(counter)"))
        }
        settings = settings.setting("locales", .array(locales))
        return "settings: locales \(op)"
    }

    mutating func settingsMenu() -> String {
        var menu = settings["menu"]?.arrayValue ?? []
        var op = "title"
        if rng.chance(0.3), !menu.isEmpty {
            let i = rng.int(0...(menu.count - 1))
            menu[i] = menu[i].setting("title", .string("Renamed \(counter)"))
        } else {
            let fresh = PlistValue.dict(["id": .int(Int64(100 + counter)), "title": .string("Item \(100 + counter)")])
            op = arrayEdit(&menu, minCount: 0, fresh: fresh)
        }
        settings = settings.setting("menu", .array(menu))
        return "settings: menu \(op)"
    }

    mutating func settingsKey() -> String {
        settings = settings.setting("theme", settings["theme"] == nil ? .string("dark") : nil)
        return "settings: theme toggled"
    }
}
