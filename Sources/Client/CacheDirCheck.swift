import FolioSupport
import Foundation

/// Checks the cache directory before a command reads or writes it, so that a file given as
/// the cache (or a place where one cannot be made) is one clear error rather than an empty cache.
enum CacheDirCheck {
    /// The name the user gave the cache directory by: the option, the variable, or the default's.
    static func label(option: String?) -> String {
        if option != nil { return "--cache-dir" }
        return ClientOptions.variable("FOLIO_CACHE_DIR") != nil ? "FOLIO_CACHE_DIR" : "the cache directory"
    }

    /// Fails when `path` exists and is not a directory; with `creating`, also when it is missing
    /// and cannot be made (a file on the way, or a parent that is not writable).
    static func check(_ path: String, option: String?, creating: Bool) throws {
        let name = "\(label(option: option)) \(path)"
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CLIError("\(name) is a file, not a directory; give a directory for the cache (it is made if missing)")
            }
            return
        }
        guard creating else { return }
        if let problem = creationProblem(path) {
            throw CLIError("\(name) cannot be created: \(problem); give a directory you can write to")
        }
    }

    /// Why the missing directory `path` cannot be made, or nil: the nearest existing ancestor
    /// must be a writable directory.
    static func creationProblem(_ path: String) -> String? {
        var parent = (path as NSString).deletingLastPathComponent
        if parent.isEmpty { parent = "." }
        while !FileManager.default.fileExists(atPath: parent), parent != "/", parent != "." {
            parent = (parent as NSString).deletingLastPathComponent
            if parent.isEmpty { parent = "." }
        }
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory)
        if !isDirectory.boolValue { return "\(parent) is a file, not a directory" }
        if access(parent, W_OK | X_OK) != 0 { return "\(parent) is not writable" }
        return nil
    }
}
