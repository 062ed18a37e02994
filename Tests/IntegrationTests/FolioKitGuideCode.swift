// The app code of docs/foliokit.md, compiled as part of the integration tests: each region
// between `// guide: begin NAME` and `// guide: end NAME` is, less its common indentation, the
// guide's ```swift block that follows `<!-- compiled: NAME -->` (DocsTests checks they are the
// same text). The names outside the regions stand in for the app's own code.
import FolioKit
import Foundation
import Logging

// guide: begin store
import FolioKit
import Foundation

struct Sonnet: Decodable, Sendable { var number: Int; var roman: String; var lines: [String] }

/// The app's one store, opened at launch: nothing is read or fetched until asked.
func openStore(bundle: Bundle = .main) throws(FolioError) -> FolioStore {
    try FolioStore(
        edge: "https://content.example.com",
        cacheDirectory: FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0].appending(path: "folio").path,
        seed: bundle.path(forResource: "seed", ofType: "folioseed").flatMap { try? FolioSeed(contentsOf: $0) },
        trust: bundle.path(forResource: "root", ofType: "pub").flatMap { try? FolioTrust(contentsOf: [$0]) })  // signed content only
}

/// Sonnet 18 now, from the cache or the seed (never waits for the network), then again after a sync.
func showSonnet18(from store: FolioStore, show: (Sonnet) -> Void) async {
    if let sonnet = try? store.decode(Sonnet.self, at: "sonnets/018.plist") { show(sonnet) }
    _ = try? await store.sync()  // conditional GETs, deltas
    if let sonnet = try? store.decode(Sonnet.self, at: "sonnets/018.plist") { show(sonnet) }
}
// guide: end store

#if canImport(SwiftUI)
// guide: begin swiftui
import SwiftUI

struct SonnetsApp: App {  // mark it @main in the app
    let store = try! openStore()
    var body: some Scene { WindowGroup { SonnetView(store: store) } }
}

struct SonnetView: View {
    let store: FolioStore
    @State private var sonnet: Sonnet?
    var body: some View {
        List(sonnet?.lines ?? [], id: \.self) { Text($0) }
            .navigationTitle(sonnet?.roman ?? "")
            .task { await showSonnet18(from: store) { sonnet = $0 } }
    }
}
// guide: end swiftui
#endif

/// What the app's screens do, for the guide's second example.
@MainActor final class GuideScreen {
    var isAnimating = false
    var progress = 0.0
    var text: String?
    func showBanner(retryIn seconds: Double?) {}
    func askForUpdate(_ version: String) {}
    func prepareFor(_ change: ContentChange) {}
    func reload(_ paths: [String]) {}
}

@MainActor func guideConfiguredStore(cachesURL: URL, token: String, stagingCAPEM: String) async throws {
    let screen = GuideScreen()
    let spinner = screen, progressView = screen, label = screen
    func showBanner(retryIn seconds: Double?) { screen.showBanner(retryIn: seconds) }
    func askForUpdate(_ version: String) { screen.askForUpdate(version) }
    func prepareFor(_ change: ContentChange) { screen.prepareFor(change) }
    func reload(_ paths: [String]) { screen.reload(paths) }

    // guide: begin configured
    let store = try FolioStore(
        edge: "https://content.example.com", cacheDirectory: cachesURL.path,
        http: FolioHTTPConfiguration(
            headers: ["Authorization": "Bearer \(token)"],   // private content
            timeout: .seconds(10), certificateAuthorities: [stagingCAPEM],
            context: FolioClientContext(appVersion: "3.1", platform: "ios", osVersion: "18.1", locale: "fr-FR")),
        logger: Logger(label: "content"))                 // swift-log; silent by default
    do { try await store.sync() } catch {
        switch error.code {
        case .maintenance: showBanner(retryIn: error.retryAfter)          // 503 + Retry-After
        case .updateRequired: askForUpdate(error.requiredAppVersion!)     // content for newer apps
        case .cancelled: break                                            // the task was cancelled
        default: break                                                    // error.hasContent: still readable
        }
    }
    Task { for await syncing in store.activity() { spinner.isAnimating = syncing } }
    Task { for await change in store.willChange() { prepareFor(change) } }  // before the switch
    Task { for await change in store.changes() { reload(change.changedPaths) } }
    Task { for await p in store.progress() { progressView.progress = p.fraction } }
    let strings = try store.strings(locale: Locale.preferredLanguages.first)
    label.text = strings.string("list.count", .int(154))                    // "154 sonnets", plural by CLDR
    // guide: end configured
}
