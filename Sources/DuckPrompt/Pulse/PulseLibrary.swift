import CPulseAudio

/// libpulse's calls: `libpulse.pa_stream_write(…)` is `pa_stream_write(3)` (each field is the
/// function of the same name, typed by `<pulse/*.h>`; the list is `DP_PULSE_CALLS` in
/// Sources/CPulseAudio/include/shim.h). libpulse.so.0 is opened with `dlopen` on the first
/// call (a lazily initialised global: thread-safe), not linked, so a process that never talks
/// to the server itself (a command handing its prompt to `duckprompt serve`) does not load it
/// and the libraries it pulls in at exec (Docs/performance-notes.md). When it cannot be opened
/// the process ends with status 69 (`SystemLibrary.require`).
let libpulse: dp_pulse = SystemLibrary.require(dp_pulse_load(), error: dp_pulse_error, debianPackage: "libpulse0")
