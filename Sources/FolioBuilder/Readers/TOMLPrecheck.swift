/// Checks made before toml++ sees a document: inputs its parser asserts against (an abort in debug
/// builds, undefined behaviour in release builds) are refused here with an ordinary error.
enum TOMLPrecheck {
    /// Refuses control characters and table headers without a key.
    static func check(_ text: ArraySlice<UInt8>) throws(ReadError) {
        try controlCharacters(text)
        try tableHeaders(text)
    }

    /// TOML allows no control characters but tab and line breaks, anywhere (strings write them as escapes).
    static func controlCharacters(_ text: ArraySlice<UInt8>) throws(ReadError) {
        for i in text.indices {
            let b = text[i]
            let lone = b == 0x0D && (i + 1 == text.endIndex || text[i + 1] != 0x0A)
            guard (b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D) || b == 0x7F || lone else { continue }
            let code = String(b, radix: 16, uppercase: true)
            throw ReadError(
                TextPosition.location(of: i - text.startIndex, in: text),
                "the control character U+\(code.count == 1 ? "000" : "00")\(code) is not allowed in TOML; remove it, or write it in a string as an escape")
        }
    }

    /// A `[` or `[[` opening a line outside any value must be followed by a key; a value that starts
    /// like a date-time must have a time after its `T`.
    static func tableHeaders(_ text: ArraySlice<UInt8>) throws(ReadError) {
        var i = text.startIndex, open: [UInt8] = [], lineStart = true, expectValue = false
        while i < text.endIndex {
            let c = text[i]
            if lineStart, c == 0x20 || c == 0x09 { i += 1; continue }
            if lineStart, open.isEmpty, c == UInt8(ascii: "[") {
                try header(text, at: i)
                while i < text.endIndex, text[i] != 0x0A { i += 1 }
                continue
            }
            lineStart = false
            switch c {
            case 0x0A: lineStart = open.isEmpty; expectValue = expectValue && !open.isEmpty
            case 0x20, 0x09, 0x0D: break
            case UInt8(ascii: "#"): while i + 1 < text.endIndex, text[i + 1] != 0x0A { i += 1 }
            case UInt8(ascii: "\""), UInt8(ascii: "'"): i = endOfString(text, at: i) - 1; expectValue = false
            case UInt8(ascii: "="): expectValue = true
            case UInt8(ascii: "["): open.append(c); expectValue = true
            case UInt8(ascii: "{"): open.append(c); expectValue = false
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if let last = open.popLast(), (last == UInt8(ascii: "[")) != (c == UInt8(ascii: "]")) {
                    let closer = last == UInt8(ascii: "[") ? "]" : "}"
                    throw ReadError(TextPosition.location(of: i - text.startIndex, in: text), "this closes nothing open here; close with \(closer)")
                }
                expectValue = false
            case UInt8(ascii: ","): expectValue = open.last == UInt8(ascii: "[")
            default:
                if expectValue { try value(text, at: i) }
                expectValue = false
            }
            i += 1
        }
    }

    /// Refuses a table header at `start` with no key after its brackets.
    static func header(_ text: ArraySlice<UInt8>, at start: Int) throws(ReadError) {
        var j = start + 1
        if j < text.endIndex, text[j] == UInt8(ascii: "[") { j += 1 }
        while j < text.endIndex, text[j] == 0x20 || text[j] == 0x09 { j += 1 }
        guard j < text.endIndex, isKeyStart(text[j]) else {
            throw ReadError(TextPosition.location(of: j - text.startIndex, in: text), "a table header needs a key, such as [table] or [[items]]")
        }
    }

    /// Refuses a bare value at `start` that begins like a date (digits and `-`) and goes on with no time
    /// after its `T`, or with a space and a digit that do not start `HH:`.
    static func value(_ text: ArraySlice<UInt8>, at start: Int) throws(ReadError) {
        func isDigit(_ at: Int) -> Bool { at < text.endIndex && (0x30...0x39).contains(text[at]) }
        func refuse(_ at: Int) -> ReadError {
            ReadError(TextPosition.location(of: at - text.startIndex, in: text), "a date-time needs a full time after its date, such as 2024-03-01T09:30:00")
        }
        guard isDigit(start) else { return }
        var i = start, sawDash = false
        while i < text.endIndex, ![0x20, 0x09, 0x0A, 0x0D, 0x2C, 0x5D, 0x7D, 0x23].contains(text[i]) {
            if text[i] == UInt8(ascii: "-") { sawDash = true }
            if sawDash, text[i] == UInt8(ascii: "T") || text[i] == UInt8(ascii: "t") {
                guard isDigit(i + 1) else { throw refuse(i + 1) }
                return
            }
            i += 1
        }
        guard sawDash, i < text.endIndex, text[i] == 0x20, isDigit(i + 1) else { return }
        guard isDigit(i + 2), i + 3 < text.endIndex, text[i + 3] == UInt8(ascii: ":") else { throw refuse(i + 1) }
    }

    static func isKeyStart(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "\""), UInt8(ascii: "'"):
            return true
        default: return false
        }
    }

    /// The index just past the string opening at `start` (basic or literal, single- or multi-line), or where it breaks off.
    static func endOfString(_ text: ArraySlice<UInt8>, at start: Int) -> Int {
        let quote = text[start]
        let triple = text[start...].starts(with: [quote, quote, quote])
        var i = start + (triple ? 3 : 1)
        while i < text.endIndex {
            let c = text[i]
            if c == 0x5C, quote == UInt8(ascii: "\"") { i += 2; continue }
            if c == 0x0A, !triple { return i }
            if c == quote {
                if !triple { return i + 1 }
                if text[i...].starts(with: [quote, quote, quote]) {
                    var end = i + 3
                    while end < text.endIndex, text[end] == quote, end - i < 5 { end += 1 }
                    return end
                }
            }
            i += 1
        }
        return text.endIndex
    }
}
