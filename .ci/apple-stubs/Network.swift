import Dispatch

// https://developer.apple.com/documentation/network/nwpathmonitor
// `final class NWPathMonitor`
public final class NWPathMonitor {
    // https://developer.apple.com/documentation/network/nwpathmonitor/init()
    // `init()`
    public init() {}

    // https://developer.apple.com/documentation/network/nwpathmonitor/pathupdatehandler
    // `@preconcurrency final var pathUpdateHandler: (@Sendable (NWPath) -> Void)? { get set }`
    @preconcurrency public final var pathUpdateHandler: (@Sendable (NWPath) -> Void)?

    // https://developer.apple.com/documentation/network/nwpathmonitor/start(queue:)
    // `final func start(queue: DispatchQueue)`
    public final func start(queue: DispatchQueue) {}

    // https://developer.apple.com/documentation/network/nwpathmonitor/cancel()
    // `final func cancel()`
    public final func cancel() {}
}

// https://developer.apple.com/documentation/network/nwpath
// `struct NWPath`
public struct NWPath {
    // https://developer.apple.com/documentation/network/nwpath/status-swift.enum
    // `enum Status` — satisfied, unsatisfied, requiresConnection
    public enum Status: Equatable, Hashable, Sendable {
        case satisfied, unsatisfied, requiresConnection
    }

    // https://developer.apple.com/documentation/network/nwpath/status-swift.property
    // `let status: NWPath.Status`
    public let status: NWPath.Status
    // https://developer.apple.com/documentation/network/nwpath/isexpensive
    // `let isExpensive: Bool`
    public let isExpensive: Bool
    // https://developer.apple.com/documentation/network/nwpath/isconstrained
    // `let isConstrained: Bool`
    public let isConstrained: Bool

    // https://developer.apple.com/documentation/network/nwpath/usesinterfacetype(_:)
    // `func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool`
    public func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool { false }
}

// https://developer.apple.com/documentation/network/nwinterface
// `struct NWInterface`
public struct NWInterface {
    // https://developer.apple.com/documentation/network/nwinterface/interfacetype
    // `enum InterfaceType` — other, wifi, cellular, wiredEthernet, loopback
    public enum InterfaceType: Equatable, Hashable, Sendable {
        case other, wifi, cellular, wiredEthernet, loopback
    }
}
