import SDK
import Testing

/// Tether's close codes (the global table is gone: each protocol reads its own codes).
@Suite("Tether protocol: close codes")
struct TetherCloseCodeTests {
    @Test(
        "close codes say fatal, transient or retry-after",
        arguments: [
            (CloseCode.unauthorized, "", RetryDisposition.doNotRetry),
            (.forbidden, "", .doNotRetry),
            (.badRequest, "", .doNotRetry),
            (.retryAfter, "retry-after-ms=300", .retryAfter(.milliseconds(300))),
            (.retryAfter, CloseCode.retryAfterReason(.seconds(2)), .retryAfter(.seconds(2))),
            (.retryAfter, "no delay given", .retry),
            (.retryAfter, "retry-after-ms=99999999999", .retry),
            (.normal, "", .retry),
            (.goingAway, "", .retry),
            (.transient, "", .retry),
            (CloseCode(4999), "", .retry),
        ]
    )
    func disposition(code: CloseCode, reason: String, expected: RetryDisposition) {
        #expect(TetherProtocol.disposition(of: code, reason: reason) == expected)
    }
}
