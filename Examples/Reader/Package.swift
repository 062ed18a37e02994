// swift-tools-version:6.0
import PackageDescription

// An app outside the Folio package that links FolioKit, as any other package would.
let package = Package(
    name: "Reader",
    platforms: [.iOS(.v16), .macOS(.v13)],
    dependencies: [.package(name: "Folio", path: "../..")],
    targets: [
        .executableTarget(name: "Reader", dependencies: [.product(name: "FolioKit", package: "Folio")])
    ],
    swiftLanguageModes: [.v6]
)
