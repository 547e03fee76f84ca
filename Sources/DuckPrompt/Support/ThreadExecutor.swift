/// Waiting for async code from synchronous code, with or without Dispatch.
///
/// A process that used Dispatch's global queues (`Task.detached`, the default executor) has
/// libdispatch's workqueue monitor wake its manager thread every second from then on; a
/// process that must sleep when idle (`duckprompt serve`, the bench's idle prompter) runs its
/// tasks on a `ThreadExecutor` instead.

/// A result set once by one thread and waited for by another (`Condition`: a pthread mutex and
/// condition variable, no timeout).
package final class ResultBox<T>: @unchecked Sendable {
    private let condition = Condition()
    private var result: Result<T, any Error>?

    package init() {}

    package func set(_ value: Result<T, any Error>) {
        condition.withLock { result = value }
        condition.broadcast()
    }

    /// Blocks until `set`.
    package func wait() -> Result<T, any Error> {
        condition.withLock {
            while result == nil { condition.waitLocked() }
            return result!
        }
    }
}

/// A task executor with one thread of its own (`startThread`: a pthread waiting on a condition
/// variable, no timeout), so that async code runs without Dispatch's global queues and an idle
/// process is not woken every second by libdispatch's workqueue monitor. Its jobs run one at a
/// time, in order; the thread lives as long as the process.
package final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = Condition()
    private var jobs: [UnownedJob] = []

    package init() {
        startThread { [self] in
            while true {
                let job = condition.withLock {
                    while jobs.isEmpty { condition.waitLocked() }
                    return jobs.removeFirst()
                }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    package func enqueue(_ job: UnownedJob) {
        condition.withLock { jobs.append(job) }
        condition.broadcast()
    }

    /// Starts `body` in a task that prefers this executor, and returns at once.
    @discardableResult
    package func start<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Task<T, any Error> {
        Task(executorPreference: self) { try await body() }
    }

    /// Runs `body` in a task that prefers this executor and blocks the calling thread until it
    /// ends. Never from this executor's own thread (it would wait for itself).
    package func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        waitForTask(on: self, body)
    }
}

/// The one way from synchronous code to async code: runs `body` in a task (on `executor`, or
/// Dispatch's global executor when nil) and blocks the calling thread on a `ResultBox` until it
/// ends. (The other way, async code waiting for blocking work, is `runBlocking`.) Never from
/// `executor`'s own thread, nor from a task (it would block one of the few global threads).
package func waitForTask<T: Sendable>(on executor: (any TaskExecutor)? = nil,
                                      _ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = ResultBox<T>()
    Task(executorPreference: executor) {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
    }
    return box.wait()
}
