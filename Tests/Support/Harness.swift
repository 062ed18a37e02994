import FolioPublished
import FolioSupport
import FolioToolSupport
import Foundation

/// Paths and process helpers shared by the integration tests, which run the real binaries.
package enum Harness {
    /// The repository root (this file is Tests/IntegrationTests/Support.swift).
    package static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The directory holding the built products (the test bundle sits beside them).
    package static let binDir: String = {
        if let dir = ProcessInfo.processInfo.environment["FOLIO_BIN_DIR"] { return dir }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // A bundle layout (Foo.xctest/Contents/...) sits deeper; walk up to the products dir.
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("folio-build").path), url.path != "/" {
            url.deleteLastPathComponent()
        }
        return url.path
    }()

    package static func binary(_ name: String) -> String { binDir + "/" + name }

    /// A fresh empty directory, removed by the caller with `cleanup`.
    package static func tempDir(_ label: String = "folio") -> String {
        let path = NSTemporaryDirectory() + "\(label)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    package static func cleanup(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A copy of the repository's content/ to edit freely.
    package static func copyContent(to dir: String) -> String {
        let dest = dir + "/content"
        try! FileManager.default.copyItem(atPath: repoRoot + "/content", toPath: dest)
        return dest
    }

    package struct Output {
        package var status: Int32
        package var stdoutBytes: [UInt8]
        package var stderr: String

        package init(status: Int32, stdoutBytes: [UInt8], stderr: String) {
            self.status = status
            self.stdoutBytes = stdoutBytes
            self.stderr = stderr
        }

        /// The output as text, decoded when asked for. Decoded at once, the 12 MB binary output
        /// of a `folio get` cost a core about 30 s: under Swift Testing, which captures a
        /// backtrace at every error thrown, the repairing decode throws at each invalid
        /// sequence (the object-storage end-to-end suite took 141 s of CPU, now 16).
        package var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    }

    /// Runs a program to completion, capturing its output through files (no pipe deadlocks).
    @discardableResult
    package static func run(
        _ program: String, _ args: [String], env: [String: String] = [:], stdin: [UInt8]? = nil, cwd: String? = nil
    ) throws -> Output {
        let dir = tempDir("run")
        defer { cleanup(dir) }
        _ = FileManager.default.createFile(atPath: dir + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: dir + "/err", contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = args
        if let cwd { p.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in env { environment[k] = v }
        p.environment = environment
        let out = FileHandle(forWritingAtPath: dir + "/out")!
        let err = FileHandle(forWritingAtPath: dir + "/err")!
        p.standardOutput = out
        p.standardError = err
        if let stdin {
            _ = FileManager.default.createFile(atPath: dir + "/in", contents: Data(stdin))
            p.standardInput = FileHandle(forReadingAtPath: dir + "/in")!
        }
        let exited = DispatchSemaphore(value: 0)
        p.terminationHandler = { _ in exited.signal() }
        try p.run()
        exited.wait()
        try out.close()
        try err.close()
        let o = try FileIO.read(dir + "/out")
        let e = try FileIO.read(dir + "/err")
        return Output(status: p.terminationStatus, stdoutBytes: o, stderr: String(decoding: e, as: UTF8.self))
    }

    /// `command` (run through `/usr/bin/env`) under a Python guard that leads a process group of
    /// its own and ends that group (SIGKILL) as soon as process `parent` (this test process) is
    /// not its parent any more, the command exits, or `lifetime` seconds pass. For servers a test
    /// starts and stops: a test run that dies leaves none behind, and none ends on a clock while
    /// its test still waits. In a full `make test` an async test can wait many minutes at its
    /// `await`s while other suites' blocking tests hold the two cooperative threads; a 600 s
    /// timer once ended a server under a test that took 652 s. So `lifetime` is only the last
    /// net, for a test process that hangs alive. Stop it with `killGuarded`.
    package static func guarded(_ command: [String], lifetime: Int = 3600, parent: String = String(getpid())) -> [String] {
        let guardScript = """
            import os, signal, subprocess, sys, time
            os.setpgid(0, 0)
            parent, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
            child = subprocess.Popen(sys.argv[3:])
            while child.poll() is None and os.getppid() == parent and time.monotonic() < end:
                time.sleep(0.5)
            os.killpg(0, signal.SIGKILL)
            """
        return ["python3", "-c", guardScript, parent, String(lifetime)] + command
    }

    /// SIGKILL to a `guarded` command's process group (and to the guard itself, in case it has
    /// not made its group yet), then waits for the guard. Safe to call twice.
    package static func killGuarded(_ process: Process) {
        if process.isRunning {
            kill(-process.processIdentifier, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitForExit()
    }

    /// Every regular file under `dir` (relative path → bytes), for before/after comparisons;
    /// without the builder's caches (`.folio-build-*`: the source stamps of
    /// `.folio-build-cache.plist`, the manifest prints of `.folio-build-prints`, and the stamps
    /// of `.folio-build-mirror` and `.folio-build-shas`), which record this machine's inodes and
    /// times: none is ever published.
    package static func snapshot(_ dir: String) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        guard let e = FileManager.default.enumerator(atPath: dir) else { return out }
        while let rel = e.nextObject() as? String {
            if rel.hasPrefix(".folio-build-") { continue }
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
                out[rel] = try? FileIO.read(dir + "/" + rel)
            }
        }
        return out
    }

    /// Checks that `root` is a complete published version: the manifest decodes and names
    /// only objects present with the right size and hash (and gzip and brotli variants that decode to
    /// them).
    package static func verifyPublished(_ root: String) throws -> Manifest {
        let manifest = try Manifest(bytes: try FileIO.read(root + "/manifest.plist"))
        for e in manifest.entries {
            let bytes = try FileIO.read(root + "/" + e.objectPath)
            guard bytes.count == e.size, ContentHash.sha256Hex(bytes) == e.sha256 else {
                throw HarnessError("object for \(e.path) does not match the manifest")
            }
            if let gz = e.gzipObjectPath {
                let z = try FileIO.read(root + "/" + gz)
                guard z.count == e.gzipSize, try Gzip.decompress(z, maxSize: e.size) == bytes else {
                    throw HarnessError("gzip variant for \(e.path) does not match")
                }
            }
            if let br = e.brotliObjectPath {
                let b = try FileIO.read(root + "/" + br)
                guard b.count == e.brSize, b.count < (e.gzipSize ?? e.size), try Brotli.decompress(b, maxSize: e.size) == bytes else {
                    throw HarnessError("brotli variant for \(e.path) does not match (or is not the smallest)")
                }
            }
        }
        let versioned = try Manifest(bytes: try FileIO.read(root + "/manifests/\(manifest.version).plist"))
        guard versioned == manifest else { throw HarnessError("manifests/\(manifest.version).plist differs from manifest.plist") }
        return manifest
    }
}

package struct HarnessError: Error, CustomStringConvertible {
    package var description: String
    package init(_ d: String) { description = d }
}

extension Process {
    /// Waits for the process to exit without keeping a core busy, and without the calling
    /// thread's run loop. Foundation's `waitUntilExit()` turns that run loop every 50 ms; in a
    /// full test run a profile caught it spinning in it for as long as its child ran (7 s of
    /// CPU in ten minutes, under one suite's publishes), on one of the two cooperative threads
    /// the tests share; alone, it waits quietly. `Harness.run` waits on its termination
    /// handler instead; this polls, for processes started elsewhere.
    package func waitForExit() {
        var pause: UInt32 = 200
        while isRunning {
            usleep(pause)
            pause = min(pause * 2, 10_000)
        }
    }
}
