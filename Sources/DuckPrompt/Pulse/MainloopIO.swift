import CPulseAudio

/// Another library's file descriptor polled by libpulse's threaded mainloop, and the loop's
/// signal: how `PipeWireWatch` runs libpipewire's loop inside libpulse's, with the loop lock
/// held, without a thread of its own. The libpulse calls of the PipeWire layer, kept here with
/// the others.
///
/// Threading: made, stopped and dropped with the loop lock held; `onReadable` runs on the loop
/// thread, lock held.
final class MainloopIO {
    private let mainloop: OpaquePointer
    private var event: OpaquePointer?
    private let onReadable: () -> Void

    /// Polls `fd` for input on `mainloop` (`pa_mainloop_api.io_new`, `PA_IO_EVENT_INPUT`) and
    /// calls `onReadable` each time it is readable. Lock held.
    init(mainloop: OpaquePointer, fd: Int32, onReadable: @escaping () -> Void) {
        self.mainloop = mainloop
        self.onReadable = onReadable
        let api = libpulse.pa_threaded_mainloop_get_api(mainloop)!
        event = api.pointee.io_new(api, fd, PA_IO_EVENT_INPUT, { _, _, _, _, userdata in
            Unmanaged<MainloopIO>.fromOpaque(userdata!).takeUnretainedValue().onReadable()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops polling (`io_free`; libpulse allows it from the event's own callback). Lock held;
    /// idempotent.
    func stop() {
        if let event { libpulse.pa_threaded_mainloop_get_api(mainloop)?.pointee.io_free(event) }
        event = nil
    }

    deinit { stop() }

    /// Wakes every thread waiting on `mainloop` (`pa_threaded_mainloop_signal`). Lock held.
    static func signal(_ mainloop: OpaquePointer) {
        libpulse.pa_threaded_mainloop_signal(mainloop, 0)
    }
}
