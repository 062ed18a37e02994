import FolioSupport
import FolioTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `Harness.guarded`, which the tests' Python, moto and SeaweedFS servers run under: it ends the
/// server when the test process ends (not on a clock that a slow run can outlast), and after its
/// last-net lifetime.
@Suite("test servers: the guard")
struct GuardedServerTests {
    /// Whether process group `group` exists (`alive`) or is gone (`!alive`) within `seconds`.
    static func group(_ group: Int32, alive: Bool, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let exists = kill(-group, 0) == 0 || errno != ESRCH
            if exists == alive { return true }
            usleep(50_000)
        }
        return false
    }

    @Test("a guarded server ends with the process that started it, and not before")
    func endsWithItsParent() throws {
        let dir = Harness.tempDir("guard")
        defer { Harness.cleanup(dir) }
        // A shell stands in for the test process: it starts the guard (its own PID as the
        // parent), reports the guard's PID (its process group), waits until told to go, and exits.
        let quoted = Harness.guarded(["sleep", "120"], parent: "PARENT").map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = quoted.joined(separator: " ").replacingOccurrences(of: "'PARENT'", with: "$$")
        let script = "/usr/bin/env \(command) & echo $! > \(dir)/pid; while [ ! -e \(dir)/go ]; do sleep 0.1; done"
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", script]
        try shell.run()
        var group: Int32 = 0
        // On failure too: the shell, and the guard's group if it outlived it (the sleep holds
        // the shell's inherited output open, and Foundation reaps the shell only after that).
        defer {
            if group > 0 { kill(-group, SIGKILL) }
            if shell.isRunning { kill(shell.processIdentifier, SIGKILL) }
            shell.waitForExit()
        }
        for _ in 0..<100 where group == 0 {
            usleep(50_000)
            group = Int32(String(decoding: (try? FileIO.read(dir + "/pid")) ?? [], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        try #require(group > 0)
        // The guard makes its group once Python runs; while its parent lives, the server lives.
        #expect(Self.group(group, alive: true, within: 10))
        #expect(!Self.group(group, alive: false, within: 1.5))
        _ = FileManager.default.createFile(atPath: dir + "/go", contents: nil)
        #expect(Self.group(group, alive: false, within: 5), "the guarded sleep outlived the shell that started it")
    }

    @Test("its lifetime is the last net: a guarded server of a parent that lives on ends after it")
    func endsAfterItsLifetime() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = Harness.guarded(["sleep", "120"], lifetime: 1)
        try p.run()
        let group = p.processIdentifier
        defer { Harness.killGuarded(p) }
        #expect(Self.group(group, alive: true, within: 10))
        #expect(Self.group(group, alive: false, within: 10), "the guarded sleep outlived its 1 s lifetime")
    }
}

/// `Harness.onOwnThread`: an async body, its child tasks and the tasks it starts with the
/// executor run on the executor's own thread, so none of their resumptions waits for a
/// cooperative thread.
@Suite("test harness: a thread of its own")
struct OwnThreadTests {
    /// Whether the caller runs on an ``ThreadsExecutor``'s thread (a synchronous look).
    static func onOwn() -> Bool { ThreadsExecutor.isCurrent }

    @Test("twenty awaits, a child task and a task it starts with the executor all run on its thread")
    func staysOnItsThread() async throws {
        #expect(!Self.onOwn())
        let looks = try await Harness.onOwnThread { executor -> [Bool] in
            var looks = [Self.onOwn()]
            for _ in 0..<20 {
                try await Task.sleep(for: .milliseconds(1))
                looks.append(Self.onOwn())
            }
            async let child = Self.onOwn()
            looks.append(await child)
            looks.append(await Task(executorPreference: executor) { Self.onOwn() }.value)
            return looks
        }
        #expect(looks.count == 23)
        #expect(looks.allSatisfy { $0 }, "\(looks)")
    }
}

/// `Harness.run` and `Process.waitForExit()` wait for a child without keeping a core busy (in
/// a full run, Foundation's `waitUntilExit()` was caught spinning for as long as its child ran).
@Suite("test harness: waiting for a process")
struct ProcessWaitTests {
    /// The wall time `wait` took and the CPU time of the calling thread it used, in seconds.
    static func measured(_ wait: () throws -> Void) rethrows -> (elapsed: Double, used: Double) {
        func threadCPU() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        let (start, cpu) = (Date(), threadCPU())
        try wait()
        return (Date().timeIntervalSince(start), threadCPU() - cpu)
    }

    @Test("Harness.run waits out a one-second child with a few milliseconds of CPU, and has its status")
    func runWaitsIdle() throws {
        var out: Harness.Output?
        let (elapsed, used) = try Self.measured { out = try Harness.run("/bin/sh", ["-c", "sleep 1; printf done; exit 3"]) }
        #expect(out?.status == 3)
        #expect(out?.stdout == "done")
        #expect(elapsed >= 1)
        #expect(used < 0.2, "the wait used \(used) s of CPU over \(elapsed) s")
    }

    @Test("waitForExit waits out a one-second child with a few milliseconds of CPU, and has its status")
    func waitForExitIdles() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "sleep 1; exit 4"]
        let (elapsed, used) = try Self.measured {
            try p.run()
            p.waitForExit()
        }
        #expect(!p.isRunning)
        #expect(p.terminationStatus == 4)
        #expect(elapsed >= 1)
        #expect(used < 0.2, "the wait used \(used) s of CPU over \(elapsed) s")
    }
}
