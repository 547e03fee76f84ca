import CEspeakNG
import Glibc

/// libespeak-ng, opened with `dlopen` when speech is first needed rather than linked, so a
/// prompt played from a file never loads it, nor libpcaudio, libsonic, libasound and
/// libpulse-simple, which it pulls in (start-up time: Docs/performance-notes.md).
///
/// Each stored function is the library's function of the same name, with the C signature of
/// `<espeak-ng/espeak_ng.h>` or `<espeak-ng/speak_lib.h>`; `CEspeakNG` gives the types and
/// constants only, and nothing links against the library. libespeak-ng is not thread-safe:
/// `Espeak` in `SpeechSource.swift` is the only caller and holds its lock around every call.
///
/// The library is opened once per process and never closed (espeak keeps global state).
struct EspeakLibrary: @unchecked Sendable {
    // @unchecked: only immutable C function pointers into a library that stays loaded.

    /// The file `dlopen` looks for: libespeak-ng's soname.
    static let fileName = "libespeak-ng.so.1"
    /// The Debian package that installs `fileName`.
    static let debianPackage = "libespeak-ng1"

    // The header's declarations, parameter for parameter: Swift converts each imported C
    // function to its type here and to no other (checked when written, with swiftc -typecheck).
    typealias InitializePath = @convention(c) (UnsafePointer<CChar>?) -> Void
    typealias Initialize = @convention(c) (UnsafeMutablePointer<espeak_ng_ERROR_CONTEXT?>?) -> espeak_ng_STATUS
    typealias ClearErrorContext = @convention(c) (UnsafeMutablePointer<espeak_ng_ERROR_CONTEXT?>?) -> Void
    typealias Info = @convention(c) (UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> UnsafePointer<CChar>?
    typealias InitializeOutput = @convention(c) (espeak_ng_OUTPUT_MODE, Int32, UnsafePointer<CChar>?)
        -> espeak_ng_STATUS
    /// `t_espeak_callback`: samples, sample count, events (ending with `espeakEVENT_LIST_TERMINATED`).
    typealias SynthCallback = @convention(c) (UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?)
        -> Int32
    typealias SetSynthCallback = @convention(c) (SynthCallback?) -> Void
    typealias GetSampleRate = @convention(c) () -> Int32
    typealias SetVoiceByName = @convention(c) (UnsafePointer<CChar>?) -> espeak_ng_STATUS
    typealias SetVoiceByProperties = @convention(c) (UnsafeMutablePointer<espeak_VOICE>?) -> espeak_ng_STATUS
    typealias SetParameter = @convention(c) (espeak_PARAMETER, Int32, Int32) -> espeak_ng_STATUS
    typealias Synthesize = @convention(c) (UnsafeRawPointer?, Int, UInt32, espeak_POSITION_TYPE, UInt32, UInt32,
                                           UnsafeMutablePointer<UInt32>?, UnsafeMutableRawPointer?) -> espeak_ng_STATUS
    typealias ListVoices = @convention(c) (UnsafeMutablePointer<espeak_VOICE>?)
        -> UnsafeMutablePointer<UnsafePointer<espeak_VOICE>?>?
    typealias GetStatusCodeMessage = @convention(c) (espeak_ng_STATUS, UnsafeMutablePointer<CChar>?, Int) -> Void

    let espeak_ng_InitializePath: InitializePath
    let espeak_ng_Initialize: Initialize
    let espeak_ng_ClearErrorContext: ClearErrorContext
    let espeak_Info: Info
    let espeak_ng_InitializeOutput: InitializeOutput
    let espeak_SetSynthCallback: SetSynthCallback
    let espeak_ng_GetSampleRate: GetSampleRate
    let espeak_ng_SetVoiceByName: SetVoiceByName
    let espeak_ng_SetVoiceByProperties: SetVoiceByProperties
    let espeak_ng_SetParameter: SetParameter
    let espeak_ng_Synthesize: Synthesize
    let espeak_ListVoices: ListVoices
    let espeak_ng_GetStatusCodeMessage: GetStatusCodeMessage

    /// The process's libespeak-ng, opened on the first call (thread-safe: a lazily initialised
    /// global); a failure is kept and thrown again.
    /// - Throws: `DuckPromptError(.unavailable)` (69) when `fileName` cannot be loaded or lacks
    ///   a function; the message names the file and `debianPackage`.
    static func shared() throws(DuckPromptError) -> EspeakLibrary { try opened.get() }

    private static let opened: Result<EspeakLibrary, DuckPromptError> = Result { () throws(DuckPromptError) in
        try EspeakLibrary(fileName: fileName)
    }

    /// Opens `fileName` (`RTLD_NOW | RTLD_LOCAL`) and looks up every function. `shared()` is
    /// the library everything uses; other names are for tests.
    /// - Parameter fileName: a soname or path, searched for as `dlopen` does.
    /// - Throws: `DuckPromptError(.unavailable)` (69) naming the file, `dlerror`'s reason and
    ///   `debianPackage` when the file cannot be loaded; naming the function, the file and
    ///   `debianPackage` when a function is missing from it.
    /// glibc: `dlopen`, `dlsym`, `dlerror`.
    init(fileName: String) throws(DuckPromptError) {
        guard let handle = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
            // dlerror: "libespeak-ng.so.1: cannot open shared object file: No such file or directory".
            var reason = dlerror().map { String(cString: $0) } ?? "no reason given"
            if reason.hasPrefix(fileName + ": ") { reason.removeFirst(fileName.count + 2) }
            throw DuckPromptError(
                .unavailable,
                "speech needs \(fileName), which cannot be loaded: \(reason); "
                    + "install the Debian package \(Self.debianPackage)")
        }
        func function<T>(_ name: String, as type: T.Type) throws(DuckPromptError) -> T {
            guard let symbol = dlsym(handle, name) else {
                throw DuckPromptError(
                    .unavailable,
                    "speech needs \(name), which \(fileName) does not define; "
                        + "install the Debian package \(Self.debianPackage)")
            }
            return unsafeBitCast(symbol, to: type)
        }
        espeak_ng_InitializePath = try function("espeak_ng_InitializePath", as: InitializePath.self)
        espeak_ng_Initialize = try function("espeak_ng_Initialize", as: Initialize.self)
        espeak_ng_ClearErrorContext = try function("espeak_ng_ClearErrorContext", as: ClearErrorContext.self)
        espeak_Info = try function("espeak_Info", as: Info.self)
        espeak_ng_InitializeOutput = try function("espeak_ng_InitializeOutput", as: InitializeOutput.self)
        espeak_SetSynthCallback = try function("espeak_SetSynthCallback", as: SetSynthCallback.self)
        espeak_ng_GetSampleRate = try function("espeak_ng_GetSampleRate", as: GetSampleRate.self)
        espeak_ng_SetVoiceByName = try function("espeak_ng_SetVoiceByName", as: SetVoiceByName.self)
        espeak_ng_SetVoiceByProperties = try function("espeak_ng_SetVoiceByProperties", as: SetVoiceByProperties.self)
        espeak_ng_SetParameter = try function("espeak_ng_SetParameter", as: SetParameter.self)
        espeak_ng_Synthesize = try function("espeak_ng_Synthesize", as: Synthesize.self)
        espeak_ListVoices = try function("espeak_ListVoices", as: ListVoices.self)
        espeak_ng_GetStatusCodeMessage = try function("espeak_ng_GetStatusCodeMessage", as: GetStatusCodeMessage.self)
    }
}
