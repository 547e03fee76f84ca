import Glibc

/// A system library the process cannot run without, opened on first use (Sources/CDynamicLibrary):
/// libpulse and libsndfile, which the package depends on.
enum SystemLibrary {
    /// The library's table of calls; when the library cannot be opened (not installed, or too
    /// old to have a call), says so on standard error and ends the process with status 69
    /// (`EX_UNAVAILABLE`, as `DuckPromptError(.unavailable)`): nothing duckprompt does works
    /// without it, and an app that embeds the library declared the same dependency.
    /// - Parameters:
    ///   - table: what the C loader returned (`dp_pulse_load()`, `dp_sndfile_load()`).
    ///   - error: the loader's reason, read only when `table` is nil.
    ///   - debianPackage: the package that installs the library, named in the message.
    static func require<Table>(_ table: UnsafePointer<Table>?, error: () -> UnsafePointer<CChar>,
                               debianPackage: String) -> Table {
        guard let table else {
            // dlerror: "libpulse.so.0: cannot open shared object file: No such file or directory".
            let message = "duckprompt: \(String(cString: error())) (install \(debianPackage))\n"
            StandardStreams.writeError(message)
            exit(69)
        }
        return table.pointee
    }
}

extension String {
    /// The text of a `const char *` a library call returns through its table (imported there
    /// as optional, where the linked function's was implicitly unwrapped); "" for NULL.
    init(libraryString text: UnsafePointer<CChar>?) {
        self = text.map { String(cString: $0) } ?? ""
    }
}
