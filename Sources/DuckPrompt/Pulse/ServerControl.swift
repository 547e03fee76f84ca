import CPulseAudio

/// Collects the answer of one module or default-sink request (loop thread).
private final class ControlBox: @unchecked Sendable {
    let mainloop: OpaquePointer
    var index: UInt32 = VolumeMath.invalidIndex
    var success = false
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

/// What `duckprompt lab` asks of the server it started: loading modules (the emulated
/// devices' null sinks) and choosing the default sink. Nothing that plays a prompt calls these.
extension PulseConnection {
    /// Loads a module and returns its index.
    /// - Parameters:
    ///   - name: the module, e.g. `module-null-sink`.
    ///   - argument: its argument string, e.g. `sink_name=speaker sink_properties='a=b c=d'`.
    /// - Throws: `.unavailable` naming the module and the server's error when it refuses, or
    ///   when the connection is lost. libpulse: `pa_context_load_module`.
    package func loadModule(_ name: String, argument: String) throws -> UInt32 {
        let box = ControlBox(mainloop: mainloop)
        try withExtendedLifetime(box) {
            try withLock {
                let op = libpulse.pa_context_load_module(context, name, argument, { _, index, userdata in
                    let box = Unmanaged<ControlBox>.fromOpaque(userdata!).takeUnretainedValue()
                    box.index = index
                    libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
                }, Unmanaged.passUnretained(box).toOpaque())
                try waitLocked(for: op, what: "loading \(name)")
                if box.index == VolumeMath.invalidIndex {
                    throw DuckPromptError(.unavailable, "the sound server refused to load \(name) \(argument): \(lastErrorLocked)")
                }
            }
        }
        return box.index
    }

    /// Suspends `sink` or resumes it (`suspend` false).
    /// - Throws: `.unavailable` when the server refuses (no such sink) or the connection is
    ///   lost. libpulse: `pa_context_suspend_sink_by_name`.
    package func suspendSink(_ sink: String, _ suspend: Bool) throws {
        let box = ControlBox(mainloop: mainloop)
        try withExtendedLifetime(box) {
            try withLock {
                let op = libpulse.pa_context_suspend_sink_by_name(context, sink, suspend ? 1 : 0, { _, success, userdata in
                    let box = Unmanaged<ControlBox>.fromOpaque(userdata!).takeUnretainedValue()
                    box.success = success != 0
                    libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
                }, Unmanaged.passUnretained(box).toOpaque())
                try waitLocked(for: op, what: suspend ? "suspending \(sink)" : "resuming \(sink)")
                if !box.success {
                    throw DuckPromptError(.unavailable, "the sound server refused to \(suspend ? "suspend" : "resume") \(sink): \(lastErrorLocked)")
                }
            }
        }
    }

    /// Makes `sink` the default sink. On PipeWire the session manager applies it a moment
    /// later: `snapshot()` (its `ServerInfo.defaultSinkName`) tells when it has.
    /// - Throws: `.unavailable` when the server refuses (no such sink) or the connection is
    ///   lost. libpulse: `pa_context_set_default_sink`.
    package func setDefaultSink(_ sink: String) throws {
        let box = ControlBox(mainloop: mainloop)
        try withExtendedLifetime(box) {
            try withLock {
                let op = libpulse.pa_context_set_default_sink(context, sink, { _, success, userdata in
                    let box = Unmanaged<ControlBox>.fromOpaque(userdata!).takeUnretainedValue()
                    box.success = success != 0
                    libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
                }, Unmanaged.passUnretained(box).toOpaque())
                try waitLocked(for: op, what: "setting the default sink")
                if !box.success {
                    throw DuckPromptError(.unavailable, "the sound server refused to make \(sink) the default sink: \(lastErrorLocked)")
                }
            }
        }
    }
}
