/// The one error type of the library: a code that maps to a documented exit status, and a
/// one-line message a user can act on, naming the file, sink or server concerned.
public struct DuckPromptError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, grouped by the exit status the CLI reports (sysexits.h).
    public enum Code: String, Sendable, Equatable {
        /// Bad arguments or options. Exit 64 (`EX_USAGE`).
        case usage
        /// Audio that libsndfile cannot decode, or a dump in no known format. Exit 65 (`EX_DATAERR`).
        case unsupportedData
        /// A file that does not exist or cannot be opened. Exit 66 (`EX_NOINPUT`).
        case noInput
        /// No sound server answered, or no usable sink; or speech was asked for and
        /// libespeak-ng (`libespeak-ng.so.1`, Debian package libespeak-ng1) cannot be loaded.
        /// Exit 69 (`EX_UNAVAILABLE`).
        case unavailable
        /// A bug or an unexpected server failure. Exit 70 (`EX_SOFTWARE`).
        case `internal`
        /// The user's config file (`$XDG_CONFIG_HOME/duckprompt/config.json`) cannot be read,
        /// is not JSON, or holds an unknown key or a bad value; the message names the file and
        /// the key. Exit 78 (`EX_CONFIG`).
        case config
        /// A prompt dropped because it could not start in time (`--expire-ms`), another
        /// prompt was playing (`--on-busy drop`), or a call was on (`--during-call drop`).
        /// Exit 75 (`EX_TEMPFAIL`).
        case dropped
    }

    /// Why a prompt ended `.dropped` without playing whole.
    package enum DropReason: String, Sendable, Equatable, Codable {
        /// A newer prompt of a higher or interrupting priority stopped it (speech-dispatcher's
        /// `message` and `important` interrupt a `text`).
        case interrupted
        /// A newer `text` or `progress` prompt took its place while it waited.
        case replaced
        /// Not queued: another prompt played or waited (`notification`, `--on-busy drop`).
        case busy
        /// It had not started by its deadline (`--expire-ms`).
        case expired
        /// A call was on and its policy is `--during-call drop`.
        case duringCall
    }

    /// A limit against too much input, which the error reports (the D-Bus service answers each
    /// with `io.github.duckprompt.DuckPrompt1.Error.LimitsExceeded`; the command exits with
    /// the error's code).
    package enum Limit: String, Sendable, Equatable {
        /// The texts of one prompt together are over `SpeechSource.maxTextLength` code points.
        case textLength
        /// Standard input, a FIFO, a device or a passed descriptor holds more than
        /// `AudioSource.inputLimit` bytes.
        case inputBytes
        /// The files of one prompt last longer than `PromptLimits.maxDuration`.
        case duration
        /// A client has `PromptLimits.promptsPerClient` prompts unfinished.
        case promptsPerClient
        /// Every client together has `PromptLimits.promptsInTotal` prompts unfinished.
        case promptsInTotal
        /// A client has `PromptLimits.callsPerClient` calls waiting for an answer.
        case callsPerClient
        /// A prompt names more than `PromptLimits.maxFiles` files.
        case files
        /// Fewer than `PromptLimits.reservedDescriptors` file descriptors are free.
        case descriptors
        /// A prompt's stream properties are over `PromptLimits.maxProperties`, or a name or a
        /// value over `PromptLimits.maxPropertyBytes`.
        case properties
    }

    public var code: Code
    /// One line, without the `duckprompt: ` prefix.
    public var message: String
    /// For `.dropped`, why; nil otherwise.
    package var dropReason: DropReason?
    /// The limit the input went over; nil for any other error.
    package var limit: Limit?

    package init(_ code: Code, _ message: String, dropReason: DropReason? = nil, limit: Limit? = nil) {
        self.code = code
        self.message = message
        self.dropReason = dropReason
        self.limit = limit
    }

    /// The process exit status for this error: 64, 65, 66, 69, 70, 75 or 78.
    public var exitCode: Int32 {
        switch code {
        case .usage: 64
        case .unsupportedData: 65
        case .noInput: 66
        case .unavailable: 69
        case .internal: 70
        case .config: 78
        case .dropped: 75
        }
    }

    public var description: String { message }
}
