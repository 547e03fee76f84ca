import Foundation

/// Waiting for async code from the bench's synchronous code. `main.swift` has no top-level
/// `await`, so the figures run on the main thread and `hold` (`HoldCommand`) never calls
/// `dispatch_main`.

/// A result set once by one thread and waited for by another (`NSCondition`: a pthread mutex
/// and condition variable, no timeout).
final class ResultBox<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        condition.lock()
        result = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Result<T, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return result!
    }
}

/// Runs `body` in a detached task (Dispatch's global queues) and blocks the calling thread
/// until it ends.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = ResultBox<T>()
    Task.detached {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
    }
    return box.wait()
}

/// A task executor with one thread of its own (a pthread waiting on a condition variable, no
/// timeout), so that async code can be waited for without Dispatch: a process that used
/// Dispatch's global queues has libdispatch's workqueue monitor wake its manager thread every
/// second from then on (`HoldCommand`).
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init() {
        Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }.start()
    }

    func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` in a task that prefers this executor and blocks the calling thread until it
    /// ends.
    func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let box = ResultBox<T>()
        Task(executorPreference: self) {
            do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        }
        return box.wait()
    }
}
