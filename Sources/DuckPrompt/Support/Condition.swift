import Glibc

/// A lock with a condition variable (`pthread_mutex_t` + `pthread_cond_t` on
/// `CLOCK_MONOTONIC`), for a thread that waits until another changes what the lock guards:
/// `Lock` (Support/System.swift) with `wait` and `broadcast` added.
package final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Releases the lock, sleeps until `broadcast` (or a spurious wake-up), and takes the lock
    /// again. Call with the lock held, in a loop that checks what it waits for.
    /// `pthread_cond_wait`.
    package func waitLocked() {
        pthread_cond_wait(cond, mutex)
    }

    /// As `waitLocked`, but for at most `milliseconds`.
    /// - Returns: false when the time ran out. `pthread_cond_timedwait` on `CLOCK_MONOTONIC`.
    @discardableResult
    package func waitLocked(milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = deadline.tv_nsec + milliseconds % 1000 * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return pthread_cond_timedwait(cond, mutex, &deadline) != ETIMEDOUT
    }

    /// Wakes every waiting thread. Call with or without the lock. `pthread_cond_broadcast`.
    package func broadcast() {
        pthread_cond_broadcast(cond)
    }
}
