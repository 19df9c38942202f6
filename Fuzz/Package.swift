// swift-tools-version:6.1
import PackageDescription

// The libFuzzer targets: the codec (`../.ci/fuzz-codec`) and the protocol adapters'
// frame parsing (`../.ci/fuzz-adapters`). A package of its own so that `swift build` of the
// root never builds them (they have no `main` without `-sanitize=fuzzer`).
let package = Package(
    name: "TetherFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "Tether", path: "..")],
    targets: [
        .target(name: "FuzzDriver", swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(
            name: "CodecFuzzer",
            dependencies: ["FuzzDriver", .product(name: "SDKTesting", package: "Tether")],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "AdapterFuzzer",
            dependencies: ["FuzzDriver", .product(name: "SDKTesting", package: "Tether")],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        ),
    ]
)
