import SDK
import Testing

@Suite("CloseCode")
struct CloseCodeTests {
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
        #expect(code.disposition(reason: reason) == expected)
    }
}
