@testable import SDK
import SDKTesting
import Testing

/// A subscription's step keeps its channel as it was given; the step's identity is its name alone.
@Suite("RecoveryStepID")
struct RecoveryStepIDTests {
    @Test("a subscription's step made from its name is the same step as .subscription(_:): equal, the same hash, and the session reads its channel from either")
    func sameStepEitherWay() async throws {
        let given = RecoveryStepID.subscription("room-1")
        let named = RecoveryStepID(rawValue: "subscribe:room-1")
        #expect(given == named && given.hashValue == named.hashValue)
        #expect(Set([given]).contains(named))
        #expect(given.channel == "room-1" && named.channel == nil, "kept only where it was given")
        let session = Session(settings: try AppSettings.testing(), transport: TestServer().transport())
        #expect(await session.channelName(of: given) == "room-1")
        #expect(await session.channelName(of: named) == "room-1")
        #expect(await session.channelName(of: RecoveryStepID.custom("subscribe:x")) == nil, "a custom step is not a subscription")
        #expect(await session.channelName(of: RecoveryStepID.authenticated) == nil)
    }
}
