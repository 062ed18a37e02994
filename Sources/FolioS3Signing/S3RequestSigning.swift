import Foundation

extension S3Configuration {
    /// The fields a request to `url` (built by `url(bucket:key:)`, so its path is encoded as
    /// SigV4 encodes it) goes with: `Host`, then `headers`, then, with credentials, the
    /// signature's (`x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` with a session
    /// token, `Authorization`), every one of them signed, at `date` (the request's own: a
    /// signature is good for 15 minutes around it). Without credentials the request goes
    /// unsigned. Fields added after these are sent unsigned.
    package func signedFields(
        method: String, url: URL, query: [(String, String)] = [], headers: [(String, String)] = [], payloadHash: String, date: Date
    ) -> [(String, String)] {
        var host = url.host ?? ""
        if let port = url.port { host += ":\(port)" }
        let fields = [("Host", host)] + headers
        guard let credentials else { return fields }
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        let signable = SignableRequest(
            method: method, encodedPath: path.isEmpty ? "/" : path, query: query, headers: fields, payloadHash: payloadHash)
        return fields + SigV4Signer(credentials: credentials, region: region).sign(signable, date: date)
    }
}
