// swift-tools-version:6.1
import PackageDescription

// The codec's libFuzzer target. A package of its own so that `swift build` of the root never
// builds it (it has no `main` without `-sanitize=fuzzer`). Run it with `../.ci/fuzz-codec`.
let package = Package(
    name: "TetherFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "Tether", path: "..")],
    targets: [
        .executableTarget(
            name: "CodecFuzzer",
            dependencies: [.product(name: "SDK", package: "Tether")],
            swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-parse-as-library"])]
        )
    ]
)
