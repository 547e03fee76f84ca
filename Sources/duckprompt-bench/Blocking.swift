import DuckPrompt

/// Runs `body` in a detached task (Dispatch's global queues) and blocks the calling thread
/// until it ends: the bench's way from its synchronous commands to the library's async API.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = ResultBox<T>()
    Task.detached {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
    }
    return box.wait()
}
