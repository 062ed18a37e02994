import Foundation

/// Child processes, spawned and reaped directly: Foundation's `Process` on Linux polls for a
/// child's exit in 50 ms steps, which was most of a small build's time (and quantised the
/// benchmark's timings of folio-build to 50 ms).
package enum Subprocess {
    /// Runs `argv` (the program looked up in PATH) with stderr discarded, and stdout captured or,
    /// without `captureOutput`, discarded too. Its exit status (128 + the signal when killed) and
    /// output, or nil when it cannot start.
    package static func run(_ argv: [String], captureOutput: Bool = true) -> (status: Int32, output: [UInt8])? {
        var fds: [Int32] = [-1, -1]
        if captureOutput { guard pipe(&fds) == 0 else { return nil } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if captureOutput {
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            posix_spawn_file_actions_addclose(&actions, fds[0])
            posix_spawn_file_actions_addclose(&actions, fds[1])
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let args = argv.map { strdup($0) } + [nil]
        defer { for a in args { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, args, environ)
        if captureOutput { close(fds[1]) }
        guard rc == 0 else {
            if captureOutput { close(fds[0]) }
            return nil
        }
        var output: [UInt8] = []
        if captureOutput {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fds[0], &buffer, buffer.count)
                if n > 0 {
                    output += buffer[0..<n]
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(fds[0])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return nil }
        }
        // Exited normally: the low 7 bits are 0 and the code is in the next byte.
        return (status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F), output)
    }
}
