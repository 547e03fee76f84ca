import Dispatch
import DuckPrompt
import FoundationEssentials
import Glibc

/// Runs an async library call from the synchronous `main`: in a `Task`, while this thread waits.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// Where `waitFor`'s Task leaves its result (written before the semaphore is signalled).
private final class Outcome<T>: @unchecked Sendable { var result: Result<T, any Error>? }
