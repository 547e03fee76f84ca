import Glibc

/// How long this process has lived, from `/proc`: the time since its exec, for the command's
/// `play --dry-run` (`PromptEstimate.startUs`: what a prompt played by a new process spends
/// before it gets to its route).
///
/// The kernel gives a process's start only in clock ticks after boot (field 22 of
/// `/proc/self/stat`, `starttime`, counted on the boot-time clock and cut to the tick:
/// `sysconf(_SC_CLK_TCK)`, 100 a second on Linux); now is `CLOCK_BOOTTIME`, the same clock.
/// The start is taken as the middle of its tick, so the age is right within half a tick (±5 ms
/// at 100 Hz). Safe from any thread.
package enum ProcessAge {
    /// This process's age in µs; nil without /proc. `/proc/self/stat`, `sysconf(_SC_CLK_TCK)`,
    /// `clock_gettime(CLOCK_BOOTTIME)`.
    package static func microseconds() -> Int? {
        guard let start = ProcessLiveness.start(of: getpid()) else { return nil }
        return age(startTicks: start, ticksPerSecond: Int(sysconf(Int32(_SC_CLK_TCK))), nowNanoseconds: bootTimeNanoseconds())
    }

    /// The age in µs of a process started in tick `startTicks` (its middle) at `nowNanoseconds`,
    /// never below 0.
    static func age(startTicks: UInt64, ticksPerSecond: Int, nowNanoseconds: Int) -> Int? {
        guard ticksPerSecond > 0 else { return nil }
        let tickUs = 1_000_000 / ticksPerSecond
        let startUs = Int(clamping: startTicks) * tickUs + tickUs / 2
        return max(0, nowNanoseconds / 1000 - startUs)
    }

    /// `CLOCK_BOOTTIME` in ns: the clock `starttime` is counted on.
    private static func bootTimeNanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }
}
