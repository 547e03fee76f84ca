import FoundationEssentials

// Where the user's config file is and how it is read: the file and the environment. Parsing
// and validating its contents is DuckPromptCore's (Config.swift).
extension DuckPromptConfig {
    /// The config file's path for an environment: `$XDG_CONFIG_HOME/duckprompt/config.json`
    /// when `XDG_CONFIG_HOME` is an absolute path (the XDG rule: a relative one is ignored),
    /// else `$HOME/.config/duckprompt/config.json`; nil when neither is set.
    public static func path(environment: [String: String] = Environment.values("XDG_CONFIG_HOME", "HOME")) -> String? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return (xdg.hasSuffix("/") ? String(xdg.dropLast()) : xdg) + "/duckprompt/config.json"
        }
        if let home = environment["HOME"], !home.isEmpty {
            return (home.hasSuffix("/") ? String(home.dropLast()) : home) + "/.config/duckprompt/config.json"
        }
        return nil
    }

    /// Loads the user's config: the file at `path(environment:)` (missing: the defaults), then
    /// `DUCKPROMPT_DEVICE` (when set and not empty) replaces `prefer`.
    /// - Parameter environment: where `XDG_CONFIG_HOME`, `HOME` and `DUCKPROMPT_DEVICE` are read.
    /// - Returns: the settings; `path` names the file when one was read.
    /// - Throws: `DuckPromptError(.config)` (exit 78) when the file exists but cannot be read,
    ///   is not a regular file (a directory, a FIFO, `/dev/zero`), is larger than 1 MiB
    ///   (`BoundedFile.configLimit`), is not JSON, or holds an unknown key or a bad value; the
    ///   message names the file and key.
    ///
    /// Reads the file with `BoundedFile` (`open`, `fstat`, `read`) and `JSONDecoder`; safe from
    /// any thread.
    public static func load(environment: [String: String] = Environment.values("XDG_CONFIG_HOME", "HOME", "DUCKPROMPT_DEVICE")) throws -> DuckPromptConfig {
        var config = DuckPromptConfig()
        if let path = path(environment: environment) {
            do {
                let data = try BoundedFile.read(path: path, limit: BoundedFile.configLimit)
                config = try parse(data, path: path)
            } catch let error as FileReadError {
                guard error.kind != .missing else { return config.withEnvironment(environment) }
                throw DuckPromptError(.config, "\(path): \(error.reason)"
                                      + (error.kind == .tooLarge ? ": a config file is a few lines of JSON" : ""))
            }
        }
        return config.withEnvironment(environment)
    }

    /// `DUCKPROMPT_DEVICE`, when set and not empty, replaces `prefer`.
    func withEnvironment(_ environment: [String: String]) -> DuckPromptConfig {
        var config = self
        if let device = environment["DUCKPROMPT_DEVICE"], !device.trimmingSpaces().isEmpty {
            config.prefer = [device.trimmingSpaces()]
            config.preferSource = .environment
        }
        return config
    }
}
