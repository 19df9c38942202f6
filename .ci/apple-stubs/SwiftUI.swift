// Only what Tether's RealtimeSessionModifier uses, as the pages declare it.

// https://developer.apple.com/documentation/swiftui/view
// `@MainActor @preconcurrency protocol View` — `associatedtype Body : View`, `@ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }`
@MainActor @preconcurrency public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

// https://developer.apple.com/documentation/swiftui/viewbuilder
// `@resultBuilder struct ViewBuilder` — buildBlock of one view
@resultBuilder public struct ViewBuilder {
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
}

// https://developer.apple.com/documentation/swift/never (SwiftUI: `extension Never : View`)
extension Never: View {
    public var body: Never { fatalError("stub") }
}

// https://developer.apple.com/documentation/swiftui/viewmodifier
// `@MainActor @preconcurrency protocol ViewModifier` — `associatedtype Body : View`,
// `typealias Content`, `@ViewBuilder @MainActor @preconcurrency func body(content: Self.Content) -> Self.Body`
// (https://developer.apple.com/documentation/swiftui/viewmodifier/body(content:))
@MainActor @preconcurrency public protocol ViewModifier {
    associatedtype Body: View
    typealias Content = _ViewModifier_Content<Self>
    @ViewBuilder @MainActor @preconcurrency func body(content: Self.Content) -> Self.Body
}

// https://developer.apple.com/documentation/swiftui/viewmodifier/content
// `typealias Content` — a proxy view for what the modifier is applied to
public struct _ViewModifier_Content<Modifier: ViewModifier>: View {
    public var body: Never { fatalError("stub") }
}

// https://developer.apple.com/documentation/swiftui/modifiedcontent
// `@frozen struct ModifiedContent<Content, Modifier>`; a View where Content: View, Modifier: ViewModifier
@frozen public struct ModifiedContent<Content, Modifier> {
    // https://developer.apple.com/documentation/swiftui/modifiedcontent/init(content:modifier:)
    // `nonisolated init(content: Content, modifier: Modifier)`
    nonisolated public init(content: Content, modifier: Modifier) {}
}

extension ModifiedContent: View where Content: View, Modifier: ViewModifier {
    public var body: Never { fatalError("stub") }
}

extension View {
    // https://developer.apple.com/documentation/swiftui/view/modifier(_:)
    // `nonisolated func modifier<T>(_ modifier: T) -> ModifiedContent<Self, T>`
    nonisolated public func modifier<T>(_ modifier: T) -> ModifiedContent<Self, T> { ModifiedContent(content: self, modifier: modifier) }

    // https://developer.apple.com/documentation/swiftui/view/task(name:priority:file:line:_:)
    // `nonisolated func task(name: String? = nil, priority: TaskPriority = .userInitiated, file: String = #fileID, line: Int = #line, _ action: sending @escaping @isolated(any) () async -> Void) -> some View`
    nonisolated public func task(
        name: String? = nil, priority: TaskPriority = .userInitiated, file: String = #fileID, line: Int = #line,
        _ action: sending @escaping @isolated(any) () async -> Void
    ) -> some View { ModifiedContent(content: self, modifier: _StubModifier()) }

    // https://developer.apple.com/documentation/swiftui/view/onchange(of:initial:_:)-4psgg
    // `nonisolated func onChange<V>(of value: V, initial: Bool = false, _ action: @escaping (V, V) -> Void) -> some View where V : Equatable`
    nonisolated public func onChange<V>(of value: V, initial: Bool = false, _ action: @escaping (V, V) -> Void) -> some View where V: Equatable {
        ModifiedContent(content: self, modifier: _StubModifier())
    }
}

/// The modifier the stubs' own modifiers return (what SwiftUI returns is opaque: `some View`).
public struct _StubModifier: ViewModifier {
    nonisolated public init() {}
    public func body(content: Content) -> Never { fatalError("stub") }
}

// https://developer.apple.com/documentation/swiftui/scenephase
// `enum ScenePhase` — background, inactive, active (Comparable, Hashable; not frozen: a switch needs `@unknown default`)
public enum ScenePhase: Comparable, Hashable, Sendable {
    case background, inactive, active
}

// https://developer.apple.com/documentation/swiftui/environmentvalues
// `struct EnvironmentValues`
public struct EnvironmentValues {
    // https://developer.apple.com/documentation/swiftui/environmentvalues/scenephase
    // `var scenePhase: ScenePhase { get set }`
    public var scenePhase: ScenePhase {
        get { .active }
        set { _ = newValue }
    }
}

// https://developer.apple.com/documentation/swiftui/environment
// `@frozen @propertyWrapper struct Environment<Value>` — `init(_ keyPath: KeyPath<EnvironmentValues, Value>)`, `var wrappedValue: Value { get }`
@frozen @propertyWrapper public struct Environment<Value> {
    // https://developer.apple.com/documentation/swiftui/environment/init(_:)-8slkf
    // `init(_ keyPath: KeyPath<EnvironmentValues, Value>)`
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    // https://developer.apple.com/documentation/swiftui/environment/wrappedvalue
    // `var wrappedValue: Value { get }`
    public var wrappedValue: Value { fatalError("stub") }
}
