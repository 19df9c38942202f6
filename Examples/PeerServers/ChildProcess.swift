#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SDK

/// A child process started with `posix_spawn`, its stdout and stderr on one pipe, read line by
/// line on a thread of its own, and its exit awaited on another — so no thread of the
/// concurrency pool ever blocks on it. (Foundation's `Process` is avoided: on Linux it keeps
/// itself and what it holds alive after the child exits, which LeakSanitizer reports.)
///
/// The child's stdin is a pipe whose write end only this process holds (close-on-exec): when
/// this process ends in any way, the child reads end of file there. A child started through
/// `Apps/tethered.py` kills itself then, so no server outlives the tests or the chaos tool.
final class ChildProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let pid: pid_t
    /// The child's output, a line at a time; ends when the child closes it.
    let lines: AsyncStream<String>
    private let exitStatus = Locked<Int32?>(nil)
    private let exitedSignal = OneShot()
    /// The write end of the child's stdin; -1 once released.
    private let tether: Locked<Int32>

    /// Every child started and not yet reaped, for ``killAll()``.
    private static let running = Locked<Set<pid_t>>([])

    /// Starts `executable` (an absolute path) with `arguments`, in `environment` added to ours.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Failure(description: "pipe() failed: errno \(errno)") }
        var input: [Int32] = [0, 0]
        guard pipe(&input) == 0 else {
            close(fds[0])
            close(fds[1])
            throw Failure(description: "pipe() failed: errno \(errno)")
        }
        // No other child may inherit the write end: it would keep the tether from ever ending.
        _ = fcntl(input[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        posix_spawn_file_actions_addclose(&actions, input[0])
        posix_spawn_file_actions_addclose(&actions, input[1])
        // The child must not inherit this process's sockets: a server socket a child holds open
        // never closes for its peer.
        guard Self.closeFrom(&actions, 3) == 0 else { throw Failure(description: "posix_spawn_file_actions_addclosefrom_np failed") }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for item in argv { free(item) }
            for item in envp { free(item) }
        }
        var child = pid_t()
        let status = Self.running.withLock { running in
            let status = posix_spawn(&child, executable, &actions, nil, argv, envp)
            if status == 0 { running.insert(child) }
            return status
        }
        close(fds[1])
        close(input[0])
        guard status == 0 else {
            close(fds[0])
            close(input[1])
            throw Failure(description: "\(executable) could not be started: error \(status)")
        }
        pid = child
        tether = Locked(input[1])
        let (lines, sink) = AsyncStream<String>.makeStream()
        self.lines = lines
        let output = fds[0]
        PlainThread.detach {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: 0x0A) {
                    sink.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeFirst(newline + 1)
                }
            }
            close(output)
            sink.finish()
        }
        let exitStatus = self.exitStatus, exitedSignal = self.exitedSignal, spawned = child
        PlainThread.detach {
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0, errno == EINTR {}
            ChildProcess.running.withLock { _ = $0.remove(spawned) }
            exitStatus.withLock { $0 = status }
            exitedSignal.fire()
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module
    /// does not export it), looked up once.
    private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            return { _, _ in -1 }
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    }()

    /// Waits for the child to exit; its raw wait status.
    @discardableResult
    func exited() async -> Int32 {
        await exitedSignal.wait()
        return exitStatus.withLock { $0 } ?? -1
    }

    /// Waits up to `limit` for the child to exit; true when it has.
    func exited(within limit: Duration) async -> Bool {
        await exitedSignal.wait(upTo: limit)
    }

    var hasExited: Bool { exitedSignal.hasFired }

    /// Sends `signal` to the child.
    func send(_ signal: Int32) {
        guard !hasExited else { return }
        kill(pid, signal)
    }

    /// Closes this process's end of the child's stdin, as this process ending would.
    func releaseTether() {
        tether.withLock { fd in
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
        }
    }

    deinit {
        releaseTether()
    }

    /// SIGKILLs every child still running, at once and without awaiting anything: for a process
    /// about to `exit()` (a child stopped with SIGSTOP cannot notice its tether end).
    static func killAll() {
        running.withLock { running in
            for pid in running { kill(pid, SIGKILL) }
        }
    }

    /// Runs a command to its end; nil when it exited 0, else its last lines of output.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async -> String? {
        await output(executable, arguments, environment: environment).failure
    }

    /// Runs a command to its end: its output lines, and nil or its failure as ``run`` says it.
    static func output(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async -> (lines: [String], failure: String?) {
        let child: ChildProcess
        do {
            child = try ChildProcess(executable, arguments, environment: environment)
        } catch {
            return ([], "\(error)")
        }
        var output: [String] = []
        for await line in child.lines { output.append(line) }
        let status = await child.exited()
        guard status != 0 else { return (output, nil) }
        return (output, "exit status \(status): " + output.suffix(5).joined(separator: " | "))
    }
}

private enum PlainThread {
    /// A plain thread, outside the concurrency pool, for work that blocks.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if created == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Box>.fromOpaque(box).release()
            body()
        }
    }
}
