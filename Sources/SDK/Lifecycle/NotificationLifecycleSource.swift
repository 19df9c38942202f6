public import ConnectionPolicy
public import Foundation

/// A lifecycle source fed by notifications: the platform's (UIKit, AppKit) through a
/// ``LifecycleNotificationMapping``, from an injectable `NotificationCenter` so tests can post
/// fake ones.
public final class NotificationLifecycleSource: LifecycleSource {
    private let hub: ChangeHub<AppLifecycleState>
    private let center: NotificationCenter
    private let observers: Locked<[ObserverToken]>

    /// Wraps an observer token. Sendable: NotificationCenter's tokens are only handed back to
    /// the center that made them, from `deinit`, once.
    private struct ObserverToken: @unchecked Sendable {
        let token: any NSObjectProtocol
    }

    /// A source that listens on `center` for the notifications `mapping` names, starting in
    /// `initialState`.
    public init(center: NotificationCenter = .default, mapping: LifecycleNotificationMapping, initialState: AppLifecycleState = .active) {
        let hub = ChangeHub(initialState)
        self.hub = hub
        self.center = center
        var tokens: [ObserverToken] = []
        for (name, state) in mapping.states {
            let token = center.addObserver(forName: name, object: nil, queue: nil) { _ in
                hub.post(state)
            }
            tokens.append(ObserverToken(token: token))
        }
        observers = Locked(tokens)
    }

    deinit {
        for observer in observers.withLock({ $0 }) { center.removeObserver(observer.token) }
    }

    public var state: AppLifecycleState { hub.value }

    /// The state now, then every change.
    public var stateStream: AsyncStream<AppLifecycleState> { hub.values() }

    public func deliverChanges(to handler: @escaping @Sendable (AppLifecycleState) async -> Void) async {
        await hub.deliver(to: handler)
    }
}
