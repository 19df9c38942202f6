// swift-tools-version:6.1
import PackageDescription

// The library products (ConnectionPolicy, SDK, SDKTesting) depend on no package: an app that
// adds Tether resolves nothing else. Packages below are used only by targets that are not
// library products (examples, the reference server, the NIO transport, tests), so SwiftPM never
// even clones them for an app. `../shared/tools/check-product-deps` and `.ci/check-consumer`
// prove it.

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Tether",
    // watchOS 10 is the minimum for ConnectionPolicy (pure logic) only. The SDK does not support
    // watchOS: a watch app may open a WebSocket only in narrow cases (Apple's TN3135: an active
    // long-form audio session, a CallKit call), elsewhere the system denies the socket, so the SDK
    // stops a watchOS build with an error that says so (Sources/SDK/Support/Platform.swift).
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "ConnectionPolicy", targets: ["ConnectionPolicy"]),
        .library(name: "SDK", targets: ["SDK"]),
        .library(name: "SDKTesting", targets: ["SDKTesting"]),
    ],
    dependencies: [
        // Only for targets that are not library products (see the note at the top).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        .target(name: "ConnectionPolicy", swiftSettings: strictSettings),
        .target(name: "SDK", dependencies: ["ConnectionPolicy"], swiftSettings: strictSettings),
        .target(name: "SDKTesting", dependencies: ["SDK", "ConnectionPolicy"], swiftSettings: strictSettings),


        // Not library products: examples, the reference server, the NIO transport.
        .target(
            name: "NIOTransport",
            dependencies: ["SDK", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio")],
            path: "Examples/NIOTransport",
            swiftSettings: strictSettings
        ),

        .target(
            name: "ReferenceServer",
            dependencies: ["SDK", "SDKTesting", "NIOTransport", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio")],
            path: "Examples/ReferenceServer",
            swiftSettings: strictSettings
        ),
        .target(
            name: "Conformance",
            dependencies: ["SDK", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            path: "Examples/Conformance",
            swiftSettings: strictSettings
        ),
        .target(
            name: "PeerServers",
            dependencies: ["SDK"],
            path: "Examples/PeerServers",
            // The real third-party servers' apps and their pinned requirements (see PeerServer).
            exclude: ["Apps"],
            swiftSettings: strictSettings
        ),
        .target(name: "ReferenceChatClient", dependencies: ["SDK", "NIOTransport"], path: "Examples/ReferenceChatClient", swiftSettings: strictSettings),
        .executableTarget(
            name: "controller-example", dependencies: ["SDK", "SDKTesting", "ReferenceChatClient", "ReferenceServer"], path: "Examples/ControllerExample",
            swiftSettings: strictSettings
        ),
        .executableTarget(name: "conformance", dependencies: ["Conformance"], path: "Examples/ConformanceCLI", swiftSettings: strictSettings),
        .executableTarget(name: "demo", dependencies: ["SDK", "NIOTransport", "ReferenceServer"], path: "Examples/Demo", swiftSettings: strictSettings),
        .executableTarget(
            name: "bench",
            dependencies: ["SDK", "SDKTesting", "NIOTransport", "ReferenceServer", "PeerServers", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            path: "Examples/Bench", swiftSettings: strictSettings
        ),
        // Synchronous on purpose: valgrind (3.19 and 3.24) cannot run a program that starts Swift
        // concurrency's thread pool on this machine, so the per-message paths it counts run here.
        .executableTarget(name: "bench-instructions", dependencies: ["SDK", "SDKTesting"], path: "Examples/BenchInstructions", swiftSettings: strictSettings),
        .executableTarget(name: "chaos", dependencies: ["SDK", "SDKTesting", "NIOTransport", "ReferenceServer", "PeerServers"], path: "Examples/Chaos", swiftSettings: strictSettings),
        .executableTarget(name: "realtime-server", dependencies: ["ReferenceServer"], path: "Examples/RealtimeServerCLI", swiftSettings: strictSettings),

        .testTarget(
            name: "ConnectionPolicyTests",
            dependencies: ["ConnectionPolicy", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "SDKTests", dependencies: ["SDK", "SDKTesting", "ConnectionPolicy"], swiftSettings: strictSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["SDK", "SDKTesting", "NIOTransport", "ReferenceServer", "Conformance", "PeerServers", "ReferenceChatClient", .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                           .product(name: "NIOWebSocket", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio")],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "SDKTestingTests", dependencies: ["SDK", "SDKTesting", "ConnectionPolicy"], swiftSettings: strictSettings),
    ]
)
