import Foundation
import SDK
import SDKTesting
import Testing

/// A token rides in a URL's user info or query: no error, log record or description quotes it,
/// wherever a URL ends up (docs/MUTANTS.md lists each place). The app's own URL may carry none
/// (the settings refuse it, without quoting it); what a protocol puts in the query (Phoenix's
/// token, Supabase's API key, Socket.IO's `credentialsInQuery`) is redacted everywhere.
@Suite("URL credentials never shown", .timeLimit(.minutes(1)))
struct URLRedactionTests {
    @Test("a URL with user info or a query is refused, and the error quotes neither: one that parses, and one that does not")
    func settingsRefuseAndDoNotQuote() throws {
        let urls = [
            "wss://alice:pa55word@chat.example.com/rt", "wss://chat.example.com/rt?token=t0ken-in-query",
            "wss://alice:pa55word@chat example.com/rt?token=t0ken-in-query",
        ]
        for url in urls {
            let error = #expect(throws: SettingsError.self) { try AppSettings.Builder().serverURL(url).build() }
            let said = "\(String(describing: error)) \(String(reflecting: error))"
            #expect(error?.code == .invalidURL)
            for secret in ["alice", "pa55word", "t0ken-in-query"] { #expect(!said.contains(secret), "\(secret) in: \(said)") }
        }
    }

    /// A transport that refuses every open, quoting the whole URL it was asked to open (as a
    /// transport's error may).
    struct QuotingRefusal: Transport {
        func open(url: URL, headers: [String: String]) async throws -> any TransportConnection {
            throw TransportError(.connectionFailed, "could not reach \(url.absoluteString)")
        }
    }

    @Test(
        "a credential a protocol puts in the URL's query reaches no log line, status, error or description",
        arguments: [
            ("Phoenix's token", ServerProtocol.phoenix()), ("Supabase's API key", .supabaseRealtime(apiKey: "test-token")),
            ("Socket.IO's credentialsInQuery", .socketIO(credentialsInQuery: "token")),
        ]
    )
    func protocolCredentialInQuery(_ name: String, _ serverProtocol: ServerProtocol) async throws {
        let lines = Locked([String]())
        let settings = try AppSettings.Builder().serverURL("ws://127.0.0.1:9/").serverProtocol(serverProtocol).token("test-token")
            .logging(minimumLevel: .debug) { record in lines.withLock { $0.append(record.message) } }.build()
        let session = Session(settings: settings, transport: QuotingRefusal(), clock: TestClock())
        var texts = [settings.description, String(reflecting: settings)]
        try await withRunningSession(session) { status in
            let seen = try await status.waitFor { if case .reconnecting = $0 { true } else { false } }
            texts += seen.flatMap { [String(describing: $0), String(reflecting: $0)] }
            #expect(texts.contains { $0.contains("could not reach") && $0.contains("<redacted>") }, "\(name): the error is reported, redacted: \(texts)")
        }
        texts += lines.withLock { $0 }
        #expect(texts.contains { $0.contains("opening") && $0.contains("<redacted>") }, "\(name): each attempt's URL is logged, redacted")
        for text in texts { #expect(!text.contains("test-token"), "\(name) leaked in: \(text)") }
    }
}
