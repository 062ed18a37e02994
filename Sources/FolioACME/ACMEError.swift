import Foundation

/// An RFC 7807 problem document (`application/problem+json`), as ACME servers report errors
/// (RFC 8555 §6.7).
package struct ACMEProblem: Decodable, Sendable, Equatable {
    package var type: String?
    package var detail: String?
    package var status: Int?
    package var subproblems: [Subproblem]?

    package struct Subproblem: Decodable, Sendable, Equatable {
        package var type: String?
        package var detail: String?
        package var identifier: ACMEIdentifier?
    }

    package init(type: String?, detail: String?, status: Int? = nil, subproblems: [Subproblem]? = nil) {
        self.type = type
        self.detail = detail
        self.status = status
        self.subproblems = subproblems
    }

    /// The ACME error namespace (RFC 8555 §6.7).
    package static let acmeNamespace = "urn:ietf:params:acme:error:"
    package static let badNonce = acmeNamespace + "badNonce"
    package static let accountDoesNotExist = acmeNamespace + "accountDoesNotExist"

    /// The type without the ACME namespace (`badNonce`), or the whole URI for another namespace.
    package var shortType: String {
        guard let type else { return "about:blank" }
        return type.hasPrefix(Self.acmeNamespace) ? String(type.dropFirst(Self.acmeNamespace.count)) : type
    }

    /// `type: detail`, with each subproblem's identifier, type and detail after it.
    package var summary: String {
        var text = shortType
        if let detail, !detail.isEmpty { text += ": " + detail }
        for sub in subproblems ?? [] {
            let name = sub.identifier.map { $0.value + " " } ?? ""
            let subType = ACMEProblem(type: sub.type, detail: nil).shortType
            text += "; \(name)\(subType)" + (sub.detail.map { ": " + $0 } ?? "")
        }
        return text
    }
}

/// A failure of one step of the ACME exchange (or of the configuration or state directory):
/// one line that names the step and, for an error the server reported, the ACME error type and
/// its detail.
package struct ACMEError: Error, CustomStringConvertible, Sendable {
    /// The step that failed: `directory`, `newNonce`, `newAccount`, `newOrder`, `authorization`,
    /// `challenge`, `finalize`, `order`, `certificate`, `configuration`, `state`.
    package var step: String
    /// The server's problem document, when it sent one.
    package var problem: ACMEProblem?
    /// What went wrong, in words (for a problem document: its summary and the HTTP status).
    package var message: String

    package init(step: String, _ message: String) {
        self.step = step
        self.problem = nil
        self.message = message
    }

    package init(step: String, problem: ACMEProblem, httpStatus: Int?) {
        self.step = step
        self.problem = problem
        self.message = problem.summary + (httpStatus.map { " (HTTP \($0))" } ?? "")
    }

    /// The problem type URI, if the server sent a problem document.
    package var problemType: String? { problem?.type }

    /// `ACME STEP: MESSAGE` on one line: control characters become spaces and a long message
    /// is cut at 400 characters.
    package var description: String {
        let flat = String(message.map { $0.isNewline || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true ? " " : $0 })
        let cut = flat.count > 400 ? flat.prefix(400) + "…" : Substring(flat)
        return "ACME \(step): \(cut)"
    }
}
