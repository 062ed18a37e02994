// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Folio",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "folio-build", targets: ["Builder"]),
        .executable(name: "folio-edge", targets: ["Edge"]),
        .executable(name: "folio", targets: ["Client"]),
        .executable(name: "folio-bench", targets: ["FolioBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .systemLibrary(name: "CSystem", path: "Shims/CSystem", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CLibXML2", path: "Shims/CLibXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        .target(
            name: "FolioCore",
            dependencies: [
                "CSystem", "CLibXML2",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .executableTarget(
            name: "Builder",
            dependencies: [
                "FolioCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "Edge",
            dependencies: [
                "FolioCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "Client",
            dependencies: [
                "FolioCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "FolioBench", dependencies: ["FolioCore"], path: "Benchmarks/FolioBench"),
        .testTarget(name: "FolioCoreTests", dependencies: ["FolioCore"]),
        .testTarget(name: "IntegrationTests", dependencies: ["FolioCore"]),
    ],
    swiftLanguageModes: [.v6]
)
