import Foundation
@testable import SDK
import Testing

@Suite("Lifecycle sources")
struct LifecycleSourceTests {
    @Test(
        "the platform mappings use the raw notification names",
        arguments: [
            (LifecycleNotificationMapping.uiKitByName, "UIApplicationDidEnterBackgroundNotification", AppLifecycleState.background),
            (.uiKitByName, "UIApplicationDidBecomeActiveNotification", .active),
            (.uiKitByName, "UIApplicationWillResignActiveNotification", .inactive),
            (.appKitByName, "NSApplicationDidHideNotification", .background),
            (.appKitByName, "NSApplicationDidBecomeActiveNotification", .active),
        ]
    )
    func mappings(mapping: LifecycleNotificationMapping, name: String, state: AppLifecycleState) {
        #expect(mapping.states[Notification.Name(name)] == state)
    }

    #if canImport(UIKit) && !os(watchOS)
    @Test("on UIKit, the framework's constants are the raw names the tests use")
    func uiKitConstants() {
        #expect(LifecycleNotificationMapping.uiKit == .uiKitByName)
    }
    #endif

    #if canImport(AppKit) && !targetEnvironment(macCatalyst)
    @Test("on AppKit, the framework's constants are the raw names the tests use")
    func appKitConstants() {
        #expect(LifecycleNotificationMapping.appKit == .appKitByName)
    }
    #endif

    @Test("a notification posted on an injected center changes the state and is delivered")
    func notifications() async {
        let center = NotificationCenter()
        let source = NotificationLifecycleSource(center: center, mapping: .uiKitByName)
        #expect(source.state == .active)
        let received = Locked([AppLifecycleState]())
        await confirmation("background delivered") { delivered in
            await withTaskGroup(of: Void.self) { group in
                let done = OneShot()
                group.addTask {
                    await source.deliverChanges { state in
                        received.withLock { $0.append(state) }
                        if state == .background {
                            delivered()
                            done.fire()
                        }
                    }
                }
                center.post(name: Notification.Name("UIApplicationDidEnterBackgroundNotification"), object: nil)
                await done.wait()
                group.cancelAll()
            }
        }
        #expect(source.state == .background)
        #expect(received.withLock { $0 }.last == .background)
    }

    @Test("an unrelated notification changes nothing")
    func unrelated() {
        let center = NotificationCenter()
        let source = NotificationLifecycleSource(center: center, mapping: .uiKitByName, initialState: .inactive)
        center.post(name: Notification.Name("SomethingElse"), object: nil)
        #expect(source.state == .inactive)
    }

    @Test("a manual source's send returns once the subscriber handled it")
    func manualSendAwaitsHandling() async {
        let source = ManualLifecycleSource()
        let seen = Locked([AppLifecycleState]())
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await source.deliverChanges { state in seen.withLock { $0.append(state) } } }
            await source.send(.background)
            #expect(seen.withLock { $0 }.last == .background)
            await source.send(.active)
            #expect(seen.withLock { $0 }.last == .active)
            group.cancelAll()
        }
    }
}
