import FolioPlist
import FolioPublished
import FolioSupport
import Foundation

/// Reads `manifest.json`, the JSON mirror folio-build writes beside `manifest.plist`
/// (``Manifest/jsonMirror(_:signed:)``): the manifest's property list in JSON, dates as ISO 8601
/// strings, and for a signed manifest a `signing` summary.
enum ManifestMirror {
    /// The manifest's date fields, which JSON carries as strings.
    static let dateFields = ["createdAt", "maintenanceUntil", "expiresAt"]

    /// Whether `bytes` are JSON (an object) rather than a property list.
    static func isJSON(_ bytes: [UInt8]) -> Bool {
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        return first == UInt8(ascii: "{")
    }

    /// The manifest in a JSON mirror and its signing summary.
    static func read(_ bytes: [UInt8], from: String) throws -> (Manifest, PlistValue?) {
        let value: PlistValue
        do { value = try JSONPlist.decode(bytes) } catch { throw CLIError("\(from) is not valid JSON: \(error)", exitCode: 2) }
        guard case .dict(var d) = value else { throw CLIError("\(from) is not a JSON manifest mirror (not an object)", exitCode: 2) }
        let signing = d.removeValue(forKey: "signing").map(restoreDates)
        for key in dateFields {
            guard let text = d[key]?.stringValue else { continue }
            guard let date = PlistDates.parseISO8601(text) else { throw CLIError("\(from): \(key) \"\(text)\" is not an ISO 8601 date", exitCode: 2) }
            d[key] = .date(date)
        }
        do { return (try Manifest(plist: .dict(d)), signing) } catch {
            throw CLIError("\(from) is not a manifest mirror: \(error); pass the manifest.plist beside it or its directory", exitCode: 2)
        }
    }

    /// The signing summary's `keyList.expiresAt` back to a date, so it compares with a plist side's.
    static func restoreDates(_ signing: PlistValue) -> PlistValue {
        guard case .dict(var d) = signing, case .dict(var list)? = d["keyList"], let text = list["expiresAt"]?.stringValue,
            let date = PlistDates.parseISO8601(text)
        else { return signing }
        list["expiresAt"] = .date(date)
        d["keyList"] = .dict(list)
        return .dict(d)
    }
}
