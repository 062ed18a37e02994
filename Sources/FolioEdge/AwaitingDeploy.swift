import FolioPublished
import FolioSupport
import Foundation

/// An edge that takes push deploys (`--deploy-token-file`) started on a root with no
/// `manifest.plist` yet, a fresh VM before its first deploy: it serves a placeholder site of
/// version 0 with no routes, answers content requests 503 with `Retry-After` and says so on
/// `/healthz`, in its metrics and in systemd's status, until a deploy (or a local publish into
/// the root) gives it a version to load.
enum AwaitingDeploy {
    /// Seconds a client is asked to wait before trying again.
    static let retryAfterSeconds = 10
    /// systemd's status line and the log's.
    static let status = "waiting for a first deploy"
    /// The answer's body to a content request.
    static let body = "no content deployed yet: deploy with folio-build publish DIR https://HOST:ADMIN\n"

    /// Whether `root` holds no production manifest (missing, empty, or a copy not finished).
    static func isEmpty(_ root: String) -> Bool {
        !FileIO.exists(PublishedLayout.path(root, PublishedLayout.manifest))
    }

    /// Makes `root` when it is missing (its parent must exist: a wrong path is an error, not a
    /// tree of new directories), so a deploy can stage into it.
    static func prepare(_ root: String) throws(EdgeStartupError) {
        var st = stat()
        if stat(root, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else { throw EdgeStartupError("--root \(root) is not a directory: give the published directory's path") }
            return
        }
        let parent = FileIO.parent(of: root)
        guard parent.isEmpty || FileIO.exists(parent) else {
            throw EdgeStartupError("--root \(root): its parent \(parent) does not exist; create it (the service's is its StateDirectory, /var/lib/folio-edge)")
        }
        guard mkdir(root, 0o755) == 0 || errno == EEXIST else {
            throw EdgeStartupError("--root \(root) does not exist and cannot be created: \(String(cString: strerror(errno)))")
        }
    }

    /// The 503 of a content request (or of `/healthz` with `health`).
    static func answer(health: Bool, omitBody: Bool) -> SimpleAnswer {
        SimpleAnswer(
            status: 503, reason: "Service Unavailable", body: health ? status + "\n" : body,
            extra: [("Retry-After", "\(retryAfterSeconds)")], omitBody: omitBody)
    }
}

extension Site {
    /// The placeholder served until a first deploy: version 0, no channel, no route.
    static func awaitingDeploy() -> Site {
        Site(
            manifest: Manifest(version: 0, createdAt: Date(timeIntervalSince1970: 0), entries: []), routes: RouteTable(), objects: [:],
            channels: [:], bytesInMemory: 0)
    }

    /// Whether this is the placeholder (every loaded site has production's channel).
    var isAwaitingDeploy: Bool { channels.isEmpty }
}
