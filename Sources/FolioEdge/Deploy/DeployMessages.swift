import Foundation

/// One request to the deploy endpoints (`/.folio/deploy…`), its body collected.
struct DeployRequest: Sendable {
    var method: String
    /// The path, without the query.
    var path: String
    /// The `Authorization` field, when the request has one.
    var authorization: String?
    var body: [UInt8]

    /// The largest body a deploy request may carry (one object or file).
    static let maxBody = 512 << 20

    /// The value of the header field `name` in a raw HTTP/1.1 request head; nil when absent.
    static func field(_ name: String, inHead head: [UInt8]) -> String? {
        let wanted = name.lowercased() + ":"
        for line in String(decoding: head, as: UTF8.self).split(separator: "\r\n").dropFirst() {
            guard line.lowercased().hasPrefix(wanted) else { continue }
            return line.dropFirst(wanted.count).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

/// The answer to a deploy request: a status and a small JSON or text body.
struct DeployResponse: Sendable, Equatable {
    var status: Int
    var body: String
    var contentType = "application/json"

    /// A text answer (errors), one line ending in a newline.
    static func text(_ status: Int, _ message: String) -> DeployResponse {
        DeployResponse(status: status, body: message + "\n", contentType: "text/plain; charset=utf-8")
    }

    /// A JSON answer with `object` encoded.
    static func json(_ status: Int, _ object: some Encodable) -> DeployResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(object)) ?? Data("{}".utf8)
        return DeployResponse(status: status, body: String(decoding: data, as: UTF8.self) + "\n")
    }

    /// The reason phrase of the statuses the deploy endpoints send.
    var reason: String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 422: "Unprocessable Content"
        case 500: "Internal Server Error"
        case 507: "Insufficient Storage"
        default: "Error"
        }
    }
}

/// What the client sends to begin a deploy (`POST /.folio/deploy`): each channel's new
/// manifest by digest, and every file of the published directory but the objects (which the
/// manifests name).
struct DeployBegin: Codable, Sendable {
    /// The deploy protocol this code speaks: 2 names objects through the manifests, rebuilds
    /// what it can from deltas and variants, and asks for the rest in rounds (`plan`); 3 takes
    /// several files in one request (``DeployFileBatch``); 4 takes a batch with the plan and
    /// the commit too, so that an edit's deploy is three requests; 5 plans and commits in one
    /// request (`finish`), so that it is two when the client sends the objects it will lack.
    static let protocolVersion = 5

    /// One file the client has and its size; a mutable one (manifests, heads) with its SHA-256.
    struct File: Codable, Sendable {
        var path: String
        var size: Int
        var sha256: String?
    }

    /// A channel's `manifest.plist` in the deployed directory.
    struct Channel: Codable, Sendable, Equatable {
        var version: Int
        var sha256: String
        var size: Int
    }

    /// The client's protocol (`DeployBegin.protocolVersion`).
    var `protocol`: Int
    /// Production's version in the deployed directory.
    var version: Int
    /// Who deploys: `user@host pid N`.
    var holder: String
    /// Deploy even when the edge serves a newer version (a rollback).
    var force: Bool
    /// Each channel's manifest, by channel name (`production` for the root's).
    var channels: [String: Channel]
    /// Every file but those under `objects/`.
    var files: [File]
}

/// The edge's answer to a begin: the deploy's id and the files it lacks.
struct DeployStarted: Codable, Sendable {
    var `protocol` = DeployBegin.protocolVersion
    var id: String
    var missing: [String]
    /// Production's version the edge serves now.
    var current: Int
    /// The edge serves every channel as deployed and lacks no file: no lock was taken, and
    /// there is nothing to send or commit.
    var upToDate = false
    /// When up to date: the object files (variants included) the served manifests name, for
    /// the client's summary.
    var objects: Int? = nil
}

/// The edge's answer to a plan: what it still lacks after rebuilding what it could.
struct DeployPlanned: Codable, Sendable {
    var missing: [String]
    /// Files the edge made itself so far (from deltas, variants, manifests).
    var rebuilt: Int
    /// Of those, the files under `objects/`.
    var rebuiltObjects: Int
    /// The edge makes nothing from the files named: once they arrive the deploy may commit
    /// without planning again (and the commit takes this plan as it is).
    var final: Bool
}

extension DeployPlanned {
    /// Nothing made, nothing lacking.
    static let none = DeployPlanned(missing: [], rebuilt: 0, rebuiltObjects: 0, final: true)

    /// Adds what `other` (a part of the same plan) made and lacks.
    mutating func add(_ other: DeployPlanned) {
        missing += other.missing
        rebuilt += other.rebuilt
        rebuiltObjects += other.rebuiltObjects
        final = final && other.final
    }
}

/// The edge's answer to a commit: the version it serves now.
struct DeployCommitted: Codable, Sendable {
    var version: Int
    var previous: Int
    /// The object files (variants included) the manifests now served name, for the client's
    /// summary: it need not parse them itself.
    var objects: Int? = nil
}

/// The edge's answer to a finish: the plan, and the commit when the plan lacked nothing.
struct DeployFinished: Codable, Sendable {
    var planned: DeployPlanned
    var committed: DeployCommitted?
}

/// The paths of the deploy endpoints.
enum DeployRoute {
    static let base = "/.folio/deploy"

    /// A request path, routed.
    enum Target: Equatable {
        case begin
        /// `PUT /.folio/deploy/ID/RELATIVE`
        case file(id: String, relative: String)
        /// `POST /.folio/deploy/ID/files`: several files in one body (``DeployFileBatch``)
        case files(id: String)
        /// `POST /.folio/deploy/ID/plan`, with a batch of files to stage first or none
        case plan(id: String)
        /// `POST /.folio/deploy/ID/commit`, with a batch of files to stage first or none
        case commit(id: String)
        /// `POST /.folio/deploy/ID/finish`: a plan, then the commit when it lacks nothing
        case finish(id: String)
        /// `DELETE /.folio/deploy/ID`
        case abort(id: String)
        /// `POST /.folio/deploy/prune` (``DeployPrune``)
        case prune
    }

    static func target(method: String, path: String) -> Target? {
        if path == base { return method == "POST" ? .begin : nil }
        if path == base + "/prune" { return method == "POST" ? .prune : nil }
        guard path.hasPrefix(base + "/") else { return nil }
        let rest = path.dropFirst(base.count + 1)
        let id = String(rest.prefix { $0 != "/" })
        let relative = String(rest.dropFirst(id.count + 1))
        switch method {
        case "PUT" where !relative.isEmpty: return .file(id: id, relative: relative)
        case "POST" where relative == "files": return .files(id: id)
        case "POST" where relative == "plan": return .plan(id: id)
        case "POST" where relative == "commit": return .commit(id: id)
        case "POST" where relative == "finish": return .finish(id: id)
        case "DELETE" where relative.isEmpty: return .abort(id: id)
        default: return nil
        }
    }
}
