// swift-tools-version:6.0
import PackageDescription

/// The two command-line programs are linked position-dependent in release builds: their large
/// images (Swift runtime, Foundation) then need no relocation at start, so each command starts
/// ~0.8 ms sooner (`folio-build --help`: 4.7 -> 3.9 ms, 694 -> 480 page faults; hyperfine). The
/// edge, a long-running network server, stays PIE for address-space randomisation.
let positionDependent: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "-no-pie"], .when(platforms: [.linux], configuration: .release))
]

let package = Package(
    name: "Folio",
    // FolioKit's floor on Apple platforms: Swift's Duration and ContinuousClock, in its API
    // (request timeouts) and its retries, arrived with iOS 16 and macOS 13. (Linux ignores it.)
    platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .executable(name: "folio-build", targets: ["Builder"]),
        .executable(name: "folio-edge", targets: ["Edge"]),
        .executable(name: "folio", targets: ["Client"]),
        .executable(name: "folio-bench", targets: ["FolioBench"]),
        .library(name: "FolioKit", targets: ["FolioKit"]),
        .library(name: "FolioPlist", targets: ["FolioPlist"]),
        .library(name: "FolioPlistXML", targets: ["FolioPlistXML"]),
        .library(name: "FolioLocalization", targets: ["FolioLocalization"]),
        .library(name: "FolioCatalogs", targets: ["FolioCatalogs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.25.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // zlib, in every Apple SDK and Linux distribution: the portable gzip decompression.
        .systemLibrary(name: "CZlib", path: "Shims/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // glibc declarations Swift's Glibc module leaves out (syncfs, sched_getaffinity, mallopt); header-only.
        .systemLibrary(name: "CFolioLinux", path: "Shims/CFolioLinux"),
        // The programs' speed paths: libdeflate and libbrotli.
        .systemLibrary(
            name: "CFolioSystem", path: "Shims/CFolioSystem",
            providers: [.apt(["libdeflate-dev", "libbrotli-dev"]), .brew(["libdeflate", "brotli"])]),
        .systemLibrary(
            name: "CCmarkGFM", path: "Shims/CCmarkGFM",
            providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]),
        // libnghttp2: the edge's HTTP/2 frames, HPACK and stream states (origin mode).
        .systemLibrary(name: "CNghttp2", path: "Shims/CNghttp2", providers: [.apt(["libnghttp2-dev"]), .brew(["libnghttp2"])]),
        .systemLibrary(
            name: "CLibXML2", path: "Shims/CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        // Internal, portable (what an app links): files, gzip decompression, hashing. Its closure on
        // Apple platforms is Foundation, Crypto and zlib (Scripts/check-closure.py).
        .target(
            name: "FolioSupport",
            dependencies: [
                "CZlib", .target(name: "CFolioLinux", condition: .when(platforms: [.linux])),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // Internal, for the programs: gzip compression (libdeflate), brotli, CRC-32, parallel maps,
        // threads, sockets, subprocesses, allocator settings.
        .target(
            name: "FolioToolSupport",
            dependencies: [
                "FolioSupport", "CZlib", "CFolioSystem", .target(name: "CFolioLinux", condition: .when(platforms: [.linux])),
            ]),
        // Binary and JSON property lists, Codable; XML written here, read by FolioPlistXML (libxml2).
        .target(name: "FolioPlist"),
        .target(name: "FolioPlistXML", dependencies: ["FolioPlist", "CLibXML2"]),
        // Plural rules, locale matching, published catalogs and their lookup.
        .target(name: "FolioLocalization", dependencies: ["FolioPlist"]),
        // The catalog source parsers (.strings, .stringsdict, .xcstrings, XLIFF, PO), for the builder and tools.
        .target(
            name: "FolioCatalogs",
            dependencies: ["FolioLocalization", "FolioPlist", "FolioPlistXML", "FolioToolSupport", "CLibXML2"]),
        // Internal: the published directory (layout, manifest, versions, verifying objects).
        .target(
            name: "FolioPublished",
            dependencies: ["FolioPlist", "FolioSupport", .product(name: "Crypto", package: "swift-crypto")]),
        // What an app links: FolioStore and the URLSession transport, over FolioKitCore.
        // Foundation (URLSession), swift-crypto, zlib and swift-log only.
        .target(
            name: "FolioKit",
            dependencies: ["FolioKitCore", .product(name: "Logging", package: "swift-log")]),
        // The sync, cache, reads and transport protocol, without a transport: the command line
        // links it with FolioKitNIO's, and no FoundationNetworking (libcurl).
        .target(
            name: "FolioKitCore",
            dependencies: [
                "FolioPublished", "FolioPlist", "FolioLocalization", "FolioSupport", "FolioHTTPFields",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The command line's transports for FolioKit: blocking sockets and AsyncHTTPClient.
        .target(
            name: "FolioKitNIO",
            dependencies: [
                "FolioKitCore", "FolioHTTPCore", "FolioSupport", "FolioToolSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // Internal: the builder's pipeline (load, check, compile, publish), under folio-build.
        // Content kinds, their readers (Yams, TOMLKit), Markdown rendering (cmark-gfm) and schemas.
        .target(
            name: "FolioBuilder",
            dependencies: [
                "FolioPublished", "FolioPlist", "FolioPlistXML", "FolioLocalization", "FolioCatalogs", "FolioSupport",
                "FolioToolSupport", "CCmarkGFM",
                .product(name: "Yams", package: "Yams"), .product(name: "TOMLKit", package: "TOMLKit"),
            ]),
        // Internal: S3 requests signed with SigV4, and where they go (s3:// locations, the AWS
        // environment, credentials and config files, path or virtual-host addressing), on
        // Foundation and swift-crypto alone: what folio-build publish uploads with and a
        // folio-edge tier reads a private bucket with, without the edge linking the publisher.
        .target(
            name: "FolioS3Signing",
            dependencies: ["FolioSupport", .product(name: "Crypto", package: "swift-crypto")]),
        // Internal: publishing a published directory to S3-compatible object storage (the S3
        // calls, the upload plan, the lock), or to an edge by a digest deploy, under folio-build publish.
        .target(
            name: "FolioObjectStore",
            dependencies: [
                "FolioS3Signing", "FolioPublished", "FolioPlist", "FolioSupport", "FolioToolSupport", "FolioKitNIO", "FolioKitCore",
                "FolioHTTPCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        .executableTarget(
            name: "Builder",
            dependencies: [
                "FolioBuilder", "FolioObjectStore", "FolioS3Signing", "FolioPublished", "FolioPlist", "FolioLocalization", "FolioSupport",
                "FolioToolSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: positionDependent),
        // The edge's request-head parser, its HTTP/2 stream bridge, and the client's response
        // reading, apart from the programs so the fuzz targets can reach them.
        .target(
            name: "FolioHTTPCore",
            dependencies: [
                "FolioHTTPFields",
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]),
        // Field syntax on Foundation alone (Cache-Control, tokens, conditions): the edge's and
        // FolioKit's.
        .target(name: "FolioHTTPFields"),
        // The edge: its connection handler, sites, negotiation and server, under folio-edge.
        .target(
            name: "FolioEdge",
            dependencies: [
                "FolioPublished", "FolioPlist", "FolioLocalization", "FolioSupport", "FolioToolSupport",
                "FolioHTTPCore", "FolioACME", "FolioS3Signing", "CNghttp2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        // Internal: an ACME (RFC 8555) client that obtains and renews the edge's certificates.
        .target(
            name: "FolioACME",
            dependencies: [
                "FolioSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "Edge",
            dependencies: [
                "FolioEdge", "FolioPublished", "FolioSupport", "FolioACME", "FolioBuilder", "FolioPlist", "FolioS3Signing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .executableTarget(
            name: "Client",
            dependencies: [
                "FolioKitCore", "FolioKitNIO", "FolioPublished", "FolioPlist", "FolioPlistXML", "FolioLocalization", "FolioSupport",
                "FolioToolSupport", "FolioHTTPCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.copy("Resources/seed.folioseed")],
            linkerSettings: positionDependent),
        .executableTarget(
            name: "FolioBench", dependencies: ["FolioPublished", "FolioPlist", "FolioLocalization", "FolioSupport", "FolioToolSupport"],
            path: "Benchmarks/FolioBench"),
        // libFuzzer targets (`make fuzz`): the harness functions, and the driver that runs them.
        .target(
            name: "FolioFuzzTargets",
            dependencies: [
                "FolioBuilder", "FolioPublished", "FolioPlist", "FolioPlistXML", "FolioLocalization", "FolioCatalogs",
                "FolioSupport", "FolioToolSupport", "FolioHTTPCore",
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Fuzz/Targets"),
        .executableTarget(name: "folio-fuzz", dependencies: ["FolioFuzzTargets"], path: "Fuzz/Driver"),
        // Shared by the test targets: the harness that finds and runs the built programs, the one
        // way to start an edge, the one raw HTTP client, Python test servers, a seeded random
        // generator.
        .target(
            name: "FolioTestSupport", dependencies: ["FolioPublished", "FolioPlist", "FolioSupport", "FolioToolSupport"],
            path: "Tests/Support"),
        .testTarget(
            name: "FolioLibraryTests",
            dependencies: [
                "FolioTestSupport", "FolioPublished", "FolioPlist", "FolioPlistXML", "FolioLocalization", "FolioCatalogs",
                "FolioSupport", "FolioToolSupport", "FolioKit", "CZlib", "CFolioSystem",
            ]),
        .testTarget(
            name: "EdgeTests",
            dependencies: [
                "FolioEdge", "FolioS3Signing", "FolioTestSupport", "FolioPublished", "FolioPlist", "FolioLocalization",
                "FolioSupport", "FolioToolSupport",
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "FolioTestSupport", "FolioPublished", "FolioPlist", "FolioLocalization", "FolioSupport", "FolioToolSupport",
                "FolioKit", "FolioKitNIO", "FolioBuilder", "FolioHTTPCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            exclude: ["Golden", "RealContent", "compare_content.py", "h2_abuse.py", "h2_conformance.py", "client_hello.py", "socket_parent.py"]),
        .testTarget(
            name: "ACMETests",
            dependencies: [
                "FolioACME", "FolioTestSupport", "FolioSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ObjectStoreTests",
            dependencies: [
                "FolioObjectStore", "FolioS3Signing", "FolioTestSupport", "FolioPublished", "FolioSupport",
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            exclude: ["fault_proxy.py"]),
        .testTarget(name: "FuzzTargetTests", dependencies: ["FolioFuzzTargets", "FolioHTTPCore", "FolioBuilder"]),
    ],
    swiftLanguageModes: [.v6]
)
