// swift-tools-version:6.1
import PackageDescription

// Micro-benchmarks (ordo-one/benchmark). A package of its own, depending on the root by path,
// so that neither an app nor the root's test command ever builds or resolves it.
//   cd Benchmarks && swift package --disable-sandbox benchmark
let package = Package(
    name: "TetherBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Tether", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "TetherBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SDK", package: "Tether"),
                .product(name: "SDKTesting", package: "Tether"),
                .product(name: "ConnectionPolicy", package: "Tether"),
            ],
            path: "Benchmarks/TetherBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
