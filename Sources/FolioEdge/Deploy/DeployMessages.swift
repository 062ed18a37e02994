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

/// What the client sends to begin a deploy (`POST /.folio/deploy`).
struct DeployBegin: Codable, Sendable {
    /// One file the client has and its size; a mutable one (manifests, heads) with its SHA-256.
    struct File: Codable, Sendable {
        var path: String
        var size: Int
        var sha256: String?
    }

    /// Production's version in the deployed directory.
    var version: Int
    /// Who deploys: `user@host pid N`.
    var holder: String
    /// Deploy even when the edge serves a newer version (a rollback).
    var force: Bool
    var files: [File]
    /// Only say what is missing: no lock, nothing staged.
    var dryRun: Bool?
}

/// The edge's answer to a begin: the deploy's id and the files it lacks.
struct DeployStarted: Codable, Sendable {
    var id: String
    var missing: [String]
    /// Production's version the edge serves now.
    var current: Int
}

/// The edge's answer to a commit: the version it serves now.
struct DeployCommitted: Codable, Sendable {
    var version: Int
    var previous: Int
}

/// The paths of the deploy endpoints.
enum DeployRoute {
    static let base = "/.folio/deploy"

    /// A request path, routed.
    enum Target: Equatable {
        case begin
        /// `PUT /.folio/deploy/ID/RELATIVE`
        case file(id: String, relative: String)
        case commit(id: String)
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
        case "POST" where relative == "commit": return .commit(id: id)
        case "DELETE" where relative.isEmpty: return .abort(id: id)
        default: return nil
        }
    }
}
