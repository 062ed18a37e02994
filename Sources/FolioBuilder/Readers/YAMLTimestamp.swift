import Foundation

/// YAML timestamps (`2024-03-01`, `2024-03-01T09:30:00Z`, `2001-12-14 21:59:43.10 -5`): no zone is UTC.
extension YAMLScalars {
    /// A cursor over the ASCII text of a scalar.
    struct Cursor {
        let bytes: [UInt8]
        var i = 0

        var atEnd: Bool { i == bytes.count }

        mutating func take(_ c: Character) -> Bool {
            guard !atEnd, bytes[i] == c.asciiValue else { return false }
            i += 1
            return true
        }

        mutating func spaces() -> Int {
            let start = i
            while !atEnd, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
            return i - start
        }

        /// The number written by `min...max` digits here, or nil.
        mutating func number(_ min: Int, _ max: Int) -> (value: Int, count: Int)? {
            var value = 0, count = 0
            while count < max, !atEnd, (0x30...0x39).contains(bytes[i]) {
                value = value * 10 + Int(bytes[i] - 0x30)
                i += 1
                count += 1
            }
            return count >= min ? (value, count) : nil
        }
    }

    /// The instant `text` writes in YAML's timestamp form, nil if it has another form; an error for an impossible date.
    static func timestamp(_ text: String, at: SourceLocation) throws(ReadError) -> Date? {
        var c = Cursor(bytes: Array(text.utf8))
        guard let year = c.number(4, 4), c.take("-"), let month = c.number(1, 2), c.take("-"), let day = c.number(1, 2) else {
            return nil
        }
        let invalid = ReadError(at, "\(text) looks like a date but is not a valid one; fix it, or quote it to keep it as text")
        if c.atEnd {
            guard month.count == 2, day.count == 2 else { return nil }
            guard CivilTime.isValid(year: year.value, month: month.value, day: day.value) else { throw invalid }
            return CivilTime.date(year: year.value, month: month.value, day: day.value)
        }
        guard c.take("T") || c.take("t") || c.spaces() > 0, let hour = c.number(1, 2), c.take(":"),
              let minute = c.number(2, 2), c.take(":"), let second = c.number(2, 2) else { return nil }
        var nanos = 0
        if c.take(".") {
            var scale = 100_000_000
            while let digit = c.number(1, 1) {
                nanos += digit.value * scale
                scale /= 10
            }
        }
        guard let offset = zone(&c), c.atEnd else { return nil }
        guard CivilTime.isValid(year: year.value, month: month.value, day: day.value), hour.value < 24,
              minute.value < 60, second.value < 60 else { throw invalid }
        return CivilTime.date(
            year: year.value, month: month.value, day: day.value, hour: hour.value, minute: minute.value,
            second: second.value, nanosecond: nanos, offsetMinutes: offset)
    }

    /// The zone after a time in minutes east of UTC (0 when none or `Z`), or nil when malformed.
    static func zone(_ c: inout Cursor) -> Int? {
        if c.atEnd { return 0 }
        _ = c.spaces()
        if c.take("Z") { return 0 }
        let sign = c.take("-") ? -1 : (c.take("+") ? 1 : 0)
        guard sign != 0, let hours = c.number(1, 2) else { return nil }
        var minutes = 0
        if c.take(":") {
            guard let m = c.number(2, 2) else { return nil }
            minutes = m.value
        }
        return sign * (hours.value * 60 + minutes)
    }
}
