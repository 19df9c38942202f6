// Stand-ins for the few SwiftUI and BackgroundTasks declarations the documentation's snippets
// use, written from Apple's documented signatures, for machines without those frameworks
// (Linux CI). They let the snippets be type-checked for Tether's API as written; they prove
// nothing about Apple's. On Apple platforms the snippets compile against the real frameworks.

import Foundation

// MARK: SwiftUI

@MainActor public protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }
}

extension Never: View {
    public var body: Never { fatalError() }
}

@resultBuilder public enum ViewBuilder {
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
}

public struct Text: View {
    public init(_ text: String) {}
    public var body: Never { fatalError() }
}

public struct ModifiedView<Content: View>: View {
    public var body: Never { fatalError() }
}

public enum ScenePhase: Equatable, Sendable {
    case background, inactive, active
}

public struct EnvironmentValues {
    public var scenePhase: ScenePhase { .active }
}

@propertyWrapper public struct Environment<Value> {
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    public var wrappedValue: Value { EnvironmentValues()[keyPath: \EnvironmentValues.scenePhase] as! Value }
}

@MainActor public protocol ViewModifier {
    associatedtype Body: View
    typealias Content = ViewModifierContent<Self>
    @ViewBuilder func body(content: Content) -> Body
}

public struct ViewModifierContent<Modifier: ViewModifier>: View {
    public var body: Never { fatalError() }
}

extension View {
    public func modifier<T: ViewModifier>(_ modifier: T) -> some View {
        ModifiedView<Self>()
    }

    public func task(priority: TaskPriority = .userInitiated, _ action: @escaping @isolated(any) @Sendable () async -> Void) -> some View {
        ModifiedView<Self>()
    }

    public func onChange<V: Equatable>(of value: V, initial: Bool = false, _ action: @escaping (_ oldValue: V, _ newValue: V) -> Void) -> some View {
        ModifiedView<Self>()
    }
}

@MainActor public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
}

extension Never: Scene {}

@resultBuilder public enum SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

@MainActor public protocol App {
    associatedtype Body: Scene
    @SceneBuilder var body: Body { get }
}

public struct WindowGroup<Content: View>: Scene {
    public init(@ViewBuilder content: () -> Content) {}
    public var body: Never { fatalError() }
}

public struct ModifiedScene<Content: Scene>: Scene {
    public var body: Never { fatalError() }
}

public struct BackgroundTask<Request, Response>: Sendable {
    public static func appRefresh(_ identifier: String) -> BackgroundTask<Void, Void> { BackgroundTask<Void, Void>() }
}

extension Scene {
    public func backgroundTask<Request, Response: Sendable>(
        _ task: BackgroundTask<Request, Response>, action: @escaping @Sendable (Request) async -> Response
    ) -> some Scene {
        ModifiedScene<Self>()
    }
}

// MARK: BackgroundTasks

open class BGTask: @unchecked Sendable {
    open var identifier: String { "" }
    open var expirationHandler: (@Sendable () -> Void)?
    open func setTaskCompleted(success: Bool) {}
}

open class BGTaskScheduler: @unchecked Sendable {
    public static let shared = BGTaskScheduler()
    open func register(forTaskWithIdentifier identifier: String, using queue: AnyObject?, launchHandler: @escaping @Sendable (BGTask) -> Void) -> Bool { true }
}

// MARK: UIKit

public struct UIBackgroundTaskIdentifier: Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

@MainActor public final class UIApplication {
    public static let shared = UIApplication()

    public func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier {
        .invalid
    }

    public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {}

    nonisolated public static let didBecomeActiveNotification = NSNotification.Name("UIApplicationDidBecomeActiveNotification")
    nonisolated public static let willResignActiveNotification = NSNotification.Name("UIApplicationWillResignActiveNotification")
    nonisolated public static let didEnterBackgroundNotification = NSNotification.Name("UIApplicationDidEnterBackgroundNotification")
    nonisolated public static let willEnterForegroundNotification = NSNotification.Name("UIApplicationWillEnterForegroundNotification")
}
