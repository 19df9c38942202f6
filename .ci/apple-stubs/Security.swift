// https://developer.apple.com/documentation/security/sectrust
// `class SecTrust` — a Core Foundation type; Sendable since the iOS 17/18 SDKs' annotations
// (`extension SecTrust: @unchecked Sendable`).
// `@unchecked Sendable`: a stub with no state; only its type is used.
public final class SecTrust: @unchecked Sendable {
    private init() {}
}
