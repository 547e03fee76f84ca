/// The limits a prompt from another process must keep, so that one misbehaving client cannot
/// hold the queue, the duck or the service's memory (the D-Bus service, Docs/dbus.md). Each
/// refusal is a `DuckPromptError` whose `limit` names it; the service answers it with
/// `io.github.duckprompt.DuckPrompt1.Error.LimitsExceeded`. The text's length
/// (`SpeechSource.maxTextLength`, 5000 code points) and a descriptor's bytes
/// (`AudioSource.inputLimit`, 64 MiB) are checked where the input is read; these are the rest.
/// Pure: no server, no file.
package enum PromptLimits {
    /// The most prompts one client (a D-Bus unique bus name) may have queued or playing.
    package static let promptsPerClient = 16
    /// The most prompts the service has queued or playing, from every client together: many
    /// clients at their own limit would otherwise hold the queue (and the music ducked) for
    /// as long as they keep calling.
    package static let promptsInTotal = 64
    /// The most calls of one client that wait for the service's worker (`Route`, `Devices`,
    /// answered one after another; longer while a stalled server holds it): each is kept
    /// until it is answered.
    package static let callsPerClient = 64
    /// The most files one `Play` names: each is opened and checked before the prompt is
    /// queued, so each holds a descriptor until the prompt ends.
    package static let maxFiles = 64
    /// The longest a prompt's files may last together, in s: 5 minutes, about what the longest
    /// text makes when spoken at the default rate. A navigation prompt lasts seconds; a longer
    /// one would hold the queue, and every other stream ducked, for everyone.
    package static let maxDuration = 300.0
    /// How long a passed descriptor may take to reach its end (`PlayFd`), in s.
    package static let descriptorSeconds = 10

    /// The most stream properties one prompt may set (`--property`, D-Bus `properties`):
    /// a stream's proplist is copied into every info the server sends to every client.
    package static let maxProperties = 64
    /// The longest a property's name or value may be, in UTF-8 bytes.
    package static let maxPropertyBytes = 1024

    /// Refuses more than `maxProperties` properties, or a name or value over `maxPropertyBytes`.
    /// - Throws: `DuckPromptError(.usage, limit: .properties)`.
    package static func checkProperties(_ properties: [String: String]) throws {
        if properties.count > maxProperties {
            throw DuckPromptError(.usage, "\(properties.count) stream properties; a prompt sets at most \(maxProperties)",
                                  limit: .properties)
        }
        if let (key, value) = properties.first(where: { $0.key.utf8.count > maxPropertyBytes || $0.value.utf8.count > maxPropertyBytes }) {
            let what = key.utf8.count > maxPropertyBytes ? "a property name of \(key.utf8.count) bytes"
                : "property \(key)'s value of \(value.utf8.count) bytes"
            throw DuckPromptError(.usage, "\(what); names and values are at most \(maxPropertyBytes) bytes", limit: .properties)
        }
    }

    /// Refuses a client that has `promptsPerClient` prompts unfinished.
    /// - Parameters:
    ///   - unfinished: the client's prompts queued or playing now.
    ///   - client: its name, for the message (a unique bus name such as `:1.42`).
    /// - Throws: `DuckPromptError(.usage, limit: .promptsPerClient)`.
    package static func admit(unfinished: Int, client: String) throws {
        guard unfinished >= promptsPerClient else { return }
        throw DuckPromptError(.usage, "\(client) has \(unfinished) prompts queued or playing, the most one client may have",
                              limit: .promptsPerClient)
    }

    /// Refuses a prompt when every client together has `promptsInTotal` unfinished.
    /// - Parameter unfinished: the prompts queued or playing now, of every client, calls that
    ///   will queue one counted.
    /// - Throws: `DuckPromptError(.usage, limit: .promptsInTotal)`.
    package static func admit(unfinishedInTotal unfinished: Int) throws {
        guard unfinished >= promptsInTotal else { return }
        throw DuckPromptError(.usage, "the service has \(unfinished) prompts queued or playing, the most it takes "
                              + "from all clients together", limit: .promptsInTotal)
    }

    /// Refuses a client's call when `callsPerClient` of its calls still wait to be answered.
    /// - Throws: `DuckPromptError(.usage, limit: .callsPerClient)`.
    package static func admit(waitingCalls waiting: Int, client: String) throws {
        guard waiting >= callsPerClient else { return }
        throw DuckPromptError(.usage, "\(client) has \(waiting) calls still waiting for an answer, the most one client may have",
                              limit: .callsPerClient)
    }

    /// The file descriptors the service keeps free for what is already queued or playing: a
    /// prompt holds a few (its files, its queue ticket, a bus connection to the players), and
    /// a restore must never fail for want of one.
    package static let reservedDescriptors = 48

    /// Refuses a prompt when fewer than `reservedDescriptors` of the process's file
    /// descriptors are free, so that running out of them is an answer naming the cause, never
    /// a prompt that fails halfway with a volume left ducked.
    /// - Parameters:
    ///   - open: the descriptors open now (`/proc/self/fd`).
    ///   - limit: the most the process may have open (`getrlimit(RLIMIT_NOFILE)`, soft).
    /// - Throws: `DuckPromptError(.unavailable, limit: .descriptors)`.
    package static func checkDescriptors(open: Int, limit: Int) throws {
        guard limit - open < reservedDescriptors else { return }
        throw DuckPromptError(.unavailable, "the service has \(open) of its \(limit) file descriptors open "
                              + "(RLIMIT_NOFILE); it keeps \(reservedDescriptors) free for the prompts it has",
                              limit: .descriptors)
    }

    /// Refuses a `Play` of more than `maxFiles` files.
    /// - Throws: `DuckPromptError(.usage, limit: .files)`.
    package static func checkFileCount(_ count: Int) throws {
        guard count > maxFiles else { return }
        throw DuckPromptError(.usage, "\(count) files; a prompt plays at most \(maxFiles)", limit: .files)
    }

    /// Refuses audio that lasts longer than `maxDuration`, all its parts together.
    /// - Parameter durations: each part's length in s (`PromptSource.duration`, from the file's
    ///   header: `SF_INFO.frames / SF_INFO.samplerate`).
    /// - Throws: `DuckPromptError(.usage, limit: .duration)` naming the length.
    package static func checkDuration(_ durations: [Double]) throws {
        let total = durations.reduce(0, +)
        guard total > maxDuration else { return }
        let shown = total.isFinite ? "\(Int(total.rounded(.up))) s" : "without end"
        throw DuckPromptError(.usage, "the prompt's audio lasts \(shown); a prompt lasts at most \(Int(maxDuration)) s",
                              limit: .duration)
    }
}
