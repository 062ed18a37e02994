/// A publish failure: what failed, in words, and the exit code it maps to.
package struct ObjectStoreError: Error, CustomStringConvertible, Sendable {
    /// The kind of failure, which decides the exit code.
    package enum Kind: Sendable {
        /// A bad argument or setting (URL, endpoint, directory).
        case usage
        /// No credentials found.
        case credentials
        /// The store refused or failed a request.
        case store
        /// Another publisher holds the lock.
        case locked
        /// The bucket holds a newer version than the directory.
        case rollback
    }

    package var kind: Kind
    package var message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
