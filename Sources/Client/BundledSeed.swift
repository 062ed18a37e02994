import FolioKitCore
import Foundation

/// The seed `folio` reads with no cache: `FOLIO_SEED` (a seed file; empty for none), else the
/// `seed.folioseed` resource beside the binary (`Folio_Client.resources/`, as built), else the
/// installed one (`PREFIX/share/folio/` beside `PREFIX/bin/folio`, as `make install` puts it).
///
/// The resource is found from the executable's own path rather than through `Bundle.module`,
/// whose accessor stops the process when the bundle is missing (a binary copied alone).
enum BundledSeed {
    static let seed: FolioSeed? = {
        if let path = ProcessInfo.processInfo.environment["FOLIO_SEED"] {
            return path.isEmpty ? nil : try? FolioSeed(contentsOf: path)
        }
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let dir = (exe as NSString).deletingLastPathComponent
        for path in [dir + "/Folio_Client.resources/seed.folioseed", dir + "/../share/folio/seed.folioseed"] where FileManager.default.fileExists(atPath: path) {
            return try? FolioSeed(contentsOf: path)
        }
        return nil
    }()
}

/// A one-line progress bar on stderr, for terminals.
enum ProgressBar {
    static func draw(_ p: SyncProgress) {
        guard p.objectsDone > 0 else { return }
        let width = 30
        let filled = p.objectsTotal == 0 ? width : width * p.objectsDone / p.objectsTotal
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        var line = "\r[\(bar)] \(p.objectsDone)/\(p.objectsTotal) objects, \(p.bytesReceived / 1024) KiB"
        if p.objectsDone == p.objectsTotal { line += "\n" }
        FileHandle.standardError.write(Data(line.utf8))
    }
}
