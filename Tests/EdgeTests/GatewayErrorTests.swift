import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

@testable import FolioEdge

/// A failed origin request is a 504 when it ran out of time and a 502 otherwise, told apart by
/// the error's type, not its text.
@Suite("the tier's gateway errors")
struct GatewayErrorTests {
    @Test("timeouts by type: deadline, read, connect and write timeouts; refusals and resets are not")
    func timeouts() {
        for error: any Error in [
            HTTPClientError.deadlineExceeded, HTTPClientError.readTimeout, HTTPClientError.connectTimeout,
            HTTPClientError.writeTimeout, ChannelError.connectTimeout(.seconds(5)),
        ] {
            #expect(HTTPCache.isTimeout(error), "\(error)")
        }
        for error: any Error in [
            HTTPClientError.remoteConnectionClosed, HTTPClientError.cancelled, ChannelError.ioOnClosedChannel,
            IOError(errnoCode: ECONNREFUSED, reason: "connect"),
        ] {
            #expect(!HTTPCache.isTimeout(error), "\(error)")
        }
    }
}
