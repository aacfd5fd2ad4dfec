// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "OpenJam",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "JamProtocol", targets: ["JamProtocol"]),
        .library(name: "JamCore", targets: ["JamCore"]),
        .library(name: "JamServer", targets: ["JamServer"]),
        .library(name: "JamClient", targets: ["JamClient"]),
        .library(name: "JamClientNIO", targets: ["JamClientNIO"]),
        .executable(name: "jam", targets: ["jam"]),
        .executable(name: "jam-bench", targets: ["jam-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        // Up to the next minor only: JamClientNIO uses the SPI of its `WebSocketHandler`, which a
        // minor release may change.
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", .upToNextMinor(from: "1.6.2")),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        .target(name: "JamProtocol"),
        .target(name: "JamCore", dependencies: ["JamProtocol"]),
        .target(name: "JamQR"),
        .target(name: "JamMedia", dependencies: ["JamProtocol"]),
        .target(name: "JamWebClient", exclude: ["Web"], plugins: ["EmbedWebClient"]),
        .executableTarget(name: "jam-embed"),
        .plugin(name: "EmbedWebClient", capability: .buildTool(), dependencies: ["jam-embed"]),
        .target(
            name: "JamServer",
            dependencies: [
                "JamProtocol", "JamCore", "JamMedia", "JamQR", "JamWebClient",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                // Opens library files without following a link (the audio route), as
                // Hummingbird's own file serving does its reads.
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ]
        ),
        // PirateRadio's messages and types: what its clients send and receive, with no server in
        // them, so the load client and the fuzzer build without the server's dependencies.
        .target(name: "JamPirateRadioWire", dependencies: ["JamProtocol"]),
        .target(
            name: "JamPirateRadio",
            dependencies: [
                "JamProtocol", "JamCore", "JamServer", "JamPirateRadioWire",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "JamQueueIT",
            dependencies: [
                "JamProtocol", "JamCore", "JamMedia", "JamServer",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "JamClient",
            dependencies: ["JamProtocol", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "JamClientNIO",
            dependencies: [
                "JamClient",
                // The core of hummingbird-websocket's WebSocket: its `WebSocketHandler` runs
                // each socket once our own connection has been upgraded.
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "jam",
            dependencies: [
                "JamServer", "JamPirateRadio", "JamQueueIT", "JamClient", "JamClientNIO", "JamQR",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "jam-sdk-example", dependencies: ["JamClient"], path: "Examples/SDKExample"),
        // libFuzzer targets (libFuzzer's `main`); `scripts/fuzz.sh` builds them with coverage and the address sanitizer.
        .executableTarget(
            name: "jam-fuzz", dependencies: ["CLibFuzzer", "JamProtocol", "JamCore", "JamMedia", "JamPirateRadioWire"], path: "Fuzz/JamFuzz",
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer"])]),
        .target(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .executableTarget(
            name: "jam-bench",
            dependencies: [
                "JamProtocol", "JamPirateRadioWire", "JamClient", "JamClientNIO",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            path: "Benchmarks/jam-bench"
        ),
        .target(
            name: "JamTestSupport",
            dependencies: [
                "JamServer", "JamCore", "JamMedia",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/JamTestSupport"
        ),
        .testTarget(name: "JamProtocolTests", dependencies: ["JamProtocol"]),
        .testTarget(name: "JamPirateRadioTests", dependencies: ["JamPirateRadioWire", "JamProtocol"]),
        .testTarget(name: "JamCoreTests", dependencies: ["JamCore"]),
        .testTarget(name: "JamQRTests", dependencies: ["JamQR"], exclude: ["Fixtures"]),
        .testTarget(name: "JamMediaTests", dependencies: ["JamMedia", "JamProtocol", "JamTestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "JamServerTests",
            dependencies: [
                "JamServer", "jam", "JamTestSupport", "JamClient", "JamClientNIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "JamClientTests",
            dependencies: [
                "JamClient", "JamClientNIO", "JamServer", "JamTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "QueueITProfileTests",
            dependencies: [
                "JamQueueIT", "JamServer", "JamCore", "JamProtocol", "JamTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ]
        ),
        .testTarget(
            name: "JamBenchTests",
            dependencies: [
                "jam-bench", "JamServer",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "PirateRadioProfileTests",
            dependencies: [
                "jam", "JamTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ]
)
