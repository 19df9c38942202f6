import Foundation

/// A JSON Web Token's `exp` claim, read without checking the signature (the server checks it):
/// the client only needs to know when to ask for a fresh token.
enum JWTExpiry {
    /// The token's `exp`, in Unix seconds; `nil` for a token that is not a JWT or has no `exp`.
    static func seconds(of token: String) -> Int64? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = decodeBase64URL(parts[1]),
              let claims = try? JSONParser.parse(payload, maxDepth: 8) else { return nil }
        if let exp = claims["exp"]?.integerValue { return exp }
        guard let exp = claims["exp"]?.numberValue, exp.isFinite, abs(exp) < 1e15 else { return nil }
        return Int64(exp.rounded(.down))
    }

    /// Indicates that `token` is a JWT whose `exp` is at or before `nowMilliseconds`.
    static func hasExpired(_ token: String, nowMilliseconds: Int64) -> Bool {
        seconds(of: token).map { $0 * 1000 <= nowMilliseconds } ?? false
    }

    private static func decodeBase64URL(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
