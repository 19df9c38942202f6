// The names the documentation's snippets take as given (an app's auth service, its session),
// so each snippet compiles as written. Not part of Tether.
public import SDK

public struct AuthService: Sendable {
    public func freshToken() async throws -> String { "token" }
}

public let auth = AuthService()

public let session = Session(
    settings: try! AppSettings.Builder().serverURL("wss://realtime.example.com/").build(),
    transport: URLSessionWebSocketTransport()
)
