/// The module's config file, the argument speech-dispatcher starts it with (`AddModule
/// "duckprompt" "sd_duckprompt" "duckprompt.conf"`: `/etc/speech-dispatcher/modules/duckprompt.conf`,
/// or the same name under `~/.config/speech-dispatcher/modules/`). speech-dispatcher's module
/// protocol does not tell a module a message's SSIP priority, so the priority every message of
/// this module gets in duckprompt's queue is set here:
///
/// ```
/// # duckprompt.conf
/// DuckpromptPriority message
/// DuckpromptKeepDuckMs 300
/// ```
/// Lines are `NAME VALUE`, names case-insensitive as speech-dispatcher's own (dotconf), values
/// optionally in double quotes; `#` starts a comment. Names that do not start with `Duckprompt`
/// are ignored (the file may be shared with other settings).
package struct SpeechdModuleConfig: Sendable, Equatable {
    /// The priority of every message in duckprompt's queue (default `message`).
    package var priority: PromptPriority = .message
    /// How long a message keeps its duck for the next one once its audio is over (played or
    /// stopped), in ms (default 300, at most 1000; 0: not kept): speech-dispatcher sends the
    /// next message only after the end or stop of this one.
    package var keepDuckMs = 300

    package init() {}

    package static let keepDuckRange = 0...1000

    /// Reads the file's text.
    /// - Throws: `DuckPromptError(.config)` (78) naming the line, for an unknown `Duckprompt…`
    ///   name, a priority that is not one of the five, or a time out of 0 … 1000 ms.
    package init(parsing text: String, path: String) throws {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.prefix { $0 != "#" }.trimmingWhitespace
            guard !line.isEmpty else { continue }
            let name = line.prefix { $0 != " " && $0 != "\t" }
            var value = line.dropFirst(name.count).trimmingWhitespace
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = String(value.dropFirst().dropLast()) }
            let at = "\(path):\(index + 1)"
            switch name.lowercased() {
            case "duckpromptpriority":
                guard let p = PromptPriority(rawValue: value.lowercased()) else {
                    throw DuckPromptError(.config, "\(at): DuckpromptPriority must be important, message, text, notification or progress, not '\(value)'")
                }
                priority = p
            case "duckpromptkeepduckms":
                guard let ms = Int(value), Self.keepDuckRange.contains(ms) else {
                    throw DuckPromptError(.config, "\(at): DuckpromptKeepDuckMs must be a whole number of ms from 0 to 1000, not '\(value)'")
                }
                keepDuckMs = ms
            case let other where other.hasPrefix("duckprompt"):
                throw DuckPromptError(.config, "\(at): unknown setting '\(name)' (DuckpromptPriority, DuckpromptKeepDuckMs)")
            default:
                continue
            }
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
