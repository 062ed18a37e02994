/// A bad S3 destination or AWS setting (an `s3://` URL, the endpoint, the region, the addressing
/// style, missing credentials): what is wrong and what to do, in words.
package struct S3SettingsError: Error, CustomStringConvertible, Sendable, Equatable {
    package var message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }
}
