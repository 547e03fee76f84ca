import FoundationEssentials

/// A regular audio file checked when the prompt is asked for and opened only when the
/// prompt's turn comes (`openForTurn()`), so a prompt that waits in the queue holds no
/// descriptor of its files: the service's prompts, up to `PromptLimits.promptsInTotal` of
/// `PromptLimits.maxFiles` files each, would otherwise hold thousands.
///
/// The file opened at the turn must be the one checked: the same file (`st_dev`, `st_ino`),
/// unchanged (`st_size`, `st_mtim`), with the same rate, channel count and frames
/// (`AudioSource.identity`). Each file is closed once its last frame was read.
package final class FileAtTurn: LibrarySource, @unchecked Sendable {
    package let path: String
    package let name: String
    package let rate: Int
    package let channels: Int
    package let duration: Double
    package let streamFormat: StreamSampleFormat
    private let frames: Int64
    private let identity: AudioSource.FileIdentity
    /// The opened file, from `openForTurn()` until its end was read. Read on one thread at a
    /// time (the prompt's, then the loop thread's).
    private var file: AudioSource?
    private var ended = false

    /// Checks `path` as `AudioSource(regularFile:)` does, then closes it.
    /// - Throws: what `AudioSource(regularFile:)` throws.
    package init(checking path: String) throws {
        let checked = try AudioSource(regularFile: path)
        guard let identity = checked.identity else { preconditionFailure("a regular file has an identity") }
        self.path = path
        name = checked.name
        rate = checked.rate
        channels = checked.channels
        duration = checked.duration
        streamFormat = checked.streamFormat
        frames = checked.frames
        self.identity = identity
    }

    /// Opens the file again, at the prompt's turn, before any volume is touched.
    /// - Throws: what `AudioSource(regularFile:)` throws (the file was removed, or is no longer
    ///   audio), or `DuckPromptError(.noInput)` when another file, or the file changed, is at
    ///   the path now.
    package func openForTurn() throws {
        guard file == nil, !ended else { return }
        let opened = try AudioSource(regularFile: path)
        guard opened.identity == identity, opened.rate == rate, opened.channels == channels,
              opened.frames == frames else {
            throw DuckPromptError(.noInput, "\(path): changed after the prompt was asked for")
        }
        file = opened
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames count: Int) -> Int {
        guard let file else { return 0 }
        let n = file.read(into: buffer, frames: count)
        if n == 0 && count > 0 {
            // Its end: the descriptor goes now, not with the prompt.
            self.file = nil
            ended = true
        }
        return n
    }
}
