import FoundationEssentials
import Glibc

/// The duck journals of `RuntimeDirectory` (`$XDG_RUNTIME_DIR/duckprompt/`): this process's
/// own (`journal-<pid>.json`: write, read, remove), those of dead prompts (`orphans`), and the
/// duck an interrupted prompt hands over to the next one (`handover.json`). Every file is
/// reached through the directory's descriptor, never following a symbolic link.
///
/// Threading: immutable; methods may be called from any thread. Two processes write different
/// files (`journal-<pid>.json`); look for orphans while holding the `RuntimeLock`, so that two
/// duckprompt processes never restore the same journal.
package final class JournalStore: Sendable {
    /// The open directory that holds the journals (and the queue and the lock).
    package let runtimeDirectory: RuntimeDirectory
    /// The process whose journal `write` and `remove` handle (default: this one).
    package let pid: Int32

    /// The directory, e.g. `/run/user/1000/duckprompt`.
    package var directory: String { runtimeDirectory.path }

    /// Opens the store of the environment's `XDG_RUNTIME_DIR` (see `init(runtimeDir:pid:)`).
    package convenience init(environment: [String: String] = Environment.values("XDG_RUNTIME_DIR"),
                            pid: Int32 = getpid()) throws {
        try self.init(runtimeDir: environment["XDG_RUNTIME_DIR"], pid: pid)
    }

    /// Opens, creating it if missing, the journal directory under `runtimeDir`
    /// (`RuntimeDirectory.init(runtimeDir:)`).
    ///
    /// - Parameters:
    ///   - runtimeDir: an `XDG_RUNTIME_DIR`; nil, empty or relative uses `/tmp/duckprompt-<uid>`.
    ///   - pid: the journal owner handled by `write`/`remove`, and skipped by `orphans`.
    /// - Throws: `DuckPromptError(.internal)` naming the path when it cannot be created or
    ///   opened, or is a symbolic link, not a directory, owned by another uid, or group- or
    ///   other-writable.
    package convenience init(runtimeDir: String?, pid: Int32 = getpid()) throws {
        self.init(directory: try RuntimeDirectory(runtimeDir: runtimeDir), pid: pid)
    }

    /// The store of an open directory.
    /// - Parameter pid: the journal owner handled by `write`/`remove`, and skipped by `orphans`.
    package init(directory: RuntimeDirectory, pid: Int32 = getpid()) {
        runtimeDirectory = directory
        self.pid = pid
    }

    /// The file name of `pid`'s journal: `journal-<pid>.json`.
    package static func fileName(pid: Int32) -> String { "journal-\(pid).json" }

    /// The path of this store's own journal.
    package var path: String { directory + "/" + Self.fileName(pid: pid) }

    /// Writes `journal` as `journal-<pid>.json`, atomically
    /// (`RuntimeDirectory.writeAtomically`): a new temporary file in the same directory
    /// (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600), written in full, `fsync`ed, then renamed over
    /// the journal (a rename replaces a symbolic link at that name, it does not follow it), and
    /// the directory `fsync`ed. Readers see the old journal or the new one, never a part. What
    /// is written is `journal.bounded()`, so that every journal written reads back
    /// (`DuckJournal.validate()`).
    ///
    /// - Parameter journal: its `pid` must be this store's (a programmer error otherwise).
    /// - Throws: `DuckPromptError(.internal)` naming the file when a step fails; the temporary
    ///   file is removed then.
    /// `openat(2)`, `write(2)`, `fsync(2)`, `renameat(2)`.
    package func write(_ journal: DuckJournal) throws {
        precondition(journal.pid == pid, "journal of pid \(journal.pid) written by the store of pid \(pid)")
        let data: Data
        do { data = try journal.bounded().encoded() } catch {
            throw DuckPromptError(.internal, "cannot encode the journal \(path): \(error)")
        }
        try runtimeDirectory.writeAtomically(data, as: Self.fileName(pid: pid))
    }

    /// Removes this store's journal (after the release, or once its streams are restored).
    /// A journal that is not there is not an error.
    /// - Throws: `DuckPromptError(.internal)` naming the file. `unlinkat(2)`.
    package func remove() throws {
        try removeFile(named: Self.fileName(pid: pid))
    }

    /// Removes a journal returned by `orphans` (after restoring it).
    /// - Parameter path: a path `orphans` returned: a file directly in `directory`.
    /// - Throws: `DuckPromptError(.internal)` naming the file. `unlinkat(2)`.
    package func remove(path: String) throws {
        let url = URL(fileURLWithPath: path)
        guard url.deletingLastPathComponent().path == URL(fileURLWithPath: directory).path else {
            throw DuckPromptError(.internal, "\(path) is not in the journal directory \(directory)")
        }
        try removeFile(named: url.lastPathComponent)
    }

    private func removeFile(named name: String) throws {
        if case .failure(let err) = runtimeDirectory.unlink(name), err != .noSuchFileOrDirectory {
            throw err.failure("cannot remove \(directory)/\(name)")
        }
    }

    /// The name of a duck handed over by an interrupted prompt to the next one.
    package static let handoverName = "handover.json"

    /// Hands the duck over: writes `journal` (with its `gain`) as this store's journal, then
    /// renames it to `handover.json`, atomically, for the next prompt to adopt
    /// (`takeHandover`). Call holding the `RuntimeLock`, before releasing it.
    /// - Throws: `DuckPromptError(.internal)` naming the file. `renameat(2)`.
    package func handOver(_ journal: DuckJournal) throws {
        try write(journal)
        try runtimeDirectory.rename(Self.fileName(pid: pid), to: Self.handoverName)
            .orThrow("cannot rename \(path) to \(directory)/\(Self.handoverName)")
        runtimeDirectory.sync()
    }

    /// Whether a handed-over duck waits for adoption.
    package var hasHandover: Bool {
        if case .missing = readFile(named: Self.handoverName) { return false }
        return true
    }

    /// The duck a prompt handed over, nil when there is none (or it cannot be read: then
    /// `orphans` restores it once its owner is gone). Call holding the `RuntimeLock`; after
    /// writing the journal that takes its streams over, `removeHandover()`.
    package func takeHandover() -> DuckJournal? {
        guard case .data(let data) = readFile(named: Self.handoverName) else { return nil }
        return try? DuckJournal.decoded(from: data)
    }

    /// Removes `handover.json` (adopted, or taken back by its owner).
    package func removeHandover() {
        runtimeDirectory.unlink(Self.handoverName)
        // Its owner waits for this (`handOver`).
        WaiterBell.ringAll(in: runtimeDirectory)
    }

    /// Takes a handed-over duck back as this store's journal (no one adopted it): renames
    /// `handover.json` to `journal-<pid>.json`. False when it is gone (adopted meanwhile).
    package func reclaimHandover() -> Bool {
        if case .success = runtimeDirectory.rename(Self.handoverName, to: Self.fileName(pid: pid)) { return true }
        return false
    }

    /// Reads this store's own journal back, nil when there is none.
    /// - Throws: `DuckPromptError(.internal)` when it cannot be read, `.unsupportedData` when
    ///   it is not a journal; both name the file.
    package func read() throws -> DuckJournal? {
        let name = Self.fileName(pid: pid)
        switch readFile(named: name) {
        case .missing: return nil
        case .failed(let reason): throw DuckPromptError(.internal, "\(directory)/\(name): \(reason)")
        case .data(let data):
            do { return try DuckJournal.decoded(from: data) } catch let error as DuckPromptError {
                throw DuckPromptError(.unsupportedData, "\(directory)/\(name): \(error.message)")
            }
        }
    }

    /// The journals in the directory whose owner is dead: no process with its pid, or one with
    /// another start time (the pid was reused). This process's own journal is skipped, and so
    /// is the journal of every live owner. Sorted by path.
    ///
    /// Files that cannot be used are passed to `report`, never returned:
    /// - not a regular file (a symbolic link is not followed), or unreadable: left in place;
    /// - garbled (not JSON, fields missing, pid not the one in its name) and no process has the
    ///   pid in its name: removed (no one can restore it, and it would be reported forever);
    ///   with a live process of that pid: left in place;
    /// - another format version: left in place (the duckprompt that wrote it may restore it).
    /// Temporary files of dead writers (`.journal-<pid>.json.*.tmp`) are removed silently.
    ///
    /// - Parameter report: called once per problem, on the calling thread, e.g. to print
    ///   `duckprompt: warning: …` on stderr. Files with the same problem (600 symbolic links)
    ///   are reported once, together (`count`, `path` the directory), after the search.
    /// - Returns: each dead owner's journal with its path (for `remove(path:)`).
    /// - Throws: `DuckPromptError(.internal)` when the directory cannot be listed, or when
    ///   `/proc/self/stat` is unreadable (without /proc every owner would look dead).
    /// `readdir(3)`, `openat(2)` with `O_NOFOLLOW`, `/proc/PID/stat`.
    /// - Parameter includingOwn: also this process's own `journal-<pid>.json`: one an earlier
    ///   prompt of a held `Prompter` kept when its server went away. Only for a caller that
    ///   holds the `RuntimeLock`, so that no prompt of this process is mid-duck.
    package func orphans(includingOwn: Bool = false, reporting report: (JournalProblem) -> Void = { _ in }) throws
        -> [(path: String, journal: DuckJournal)] {
        guard ProcessLiveness.start(of: getpid()) != nil else {
            throw DuckPromptError(.internal, "cannot tell live duckprompt processes from dead ones: /proc/self/stat is unreadable (is /proc mounted?)")
        }
        var problems: [JournalProblem] = []
        let found = try findOrphans(includingOwn: includingOwn) { problems.append($0) }
        for problem in Self.summarized(problems, directory: directory) { report(problem) }
        return found
    }

    /// Problems with the same reason and outcome as one summary each: 600 symbolic links make
    /// one line per run, not 600. A reason met once is kept as it is. In order of first
    /// appearance.
    static func summarized(_ problems: [JournalProblem], directory: String) -> [JournalProblem] {
        var groups: [(first: JournalProblem, names: [String])] = []
        for problem in problems {
            let name = String(problem.path.split(separator: "/").last ?? "")
            if let i = groups.firstIndex(where: { $0.first.reason == problem.reason && $0.first.removed == problem.removed }) {
                groups[i].names.append(name)
            } else {
                groups.append((problem, [name]))
            }
        }
        return groups.map { group in
            guard group.names.count > 1 else { return group.first }
            let names = group.names.sorted()
            return JournalProblem(path: directory,
                                  reason: "\(names.count) files (\(names.first!) … \(names.last!)): \(group.first.reason)",
                                  removed: group.first.removed, count: names.count)
        }
    }

    private func findOrphans(includingOwn: Bool, reporting report: (JournalProblem) -> Void) throws -> [(path: String, journal: DuckJournal)] {
        var found: [(path: String, journal: DuckJournal)] = []
        for name in try runtimeDirectory.names().sorted() {
            let path = directory + "/" + name
            if let tempPid = Self.pid(inTemporaryName: name) {
                if tempPid != pid, !ProcessLiveness.exists(tempPid) { runtimeDirectory.unlink(name) }
                continue
            }
            let isHandover = name == Self.handoverName
            guard let namePid = isHandover ? Int32?.some(0) : Self.pid(inJournalName: name),
                  isHandover || namePid != pid || includingOwn else { continue }
            let data: Data
            switch readFile(named: name) {
            case .missing: continue
            case .failed(let reason):
                report(JournalProblem(path: path, reason: reason, removed: false))
                continue
            case .data(let d): data = d
            }
            let journal: DuckJournal
            do {
                journal = try DuckJournal.decoded(from: data)
                guard isHandover || journal.pid == namePid else {
                    throw DuckPromptError(.unsupportedData, "garbled journal (it names pid \(journal.pid))")
                }
            } catch {
                let message = (error as? DuckPromptError)?.message ?? "\(error)"
                let otherVersion = DuckJournal.version(of: data).map { $0 != DuckJournal.currentVersion } ?? false
                if otherVersion || (!isHandover && ProcessLiveness.exists(namePid)) {
                    report(JournalProblem(path: path, reason: message, removed: false))
                } else {
                    let removed = if case .success = runtimeDirectory.unlink(name) { true } else { false }
                    report(JournalProblem(path: path, reason: message, removed: removed))
                }
                continue
            }
            // Our own handover is for the next prompt of this process to adopt, not restore.
            let own = journal.pid == pid
            if own ? (isHandover || !includingOwn) : journal.ownerIsAlive { continue }
            found.append((path, journal))
        }
        return found
    }

    // MARK: - Files

    enum ReadResult { case data(Data), missing, failed(String) }

    /// Reads a journal file of the directory without following a link, nor blocking on a
    /// FIFO; only a regular file of at most `BoundedFile.journalLimit`
    /// (`RuntimeDirectory.read`).
    func readFile(named name: String) -> ReadResult {
        switch runtimeDirectory.read(name, limit: BoundedFile.journalLimit) {
        case .success(let data): return .data(data)
        case .failure(let error) where error.kind == .missing: return .missing
        case .failure(let error):
            return .failed(error.reason + (error.kind == .tooLarge ? ": no journal is that large" : ""))
        }
    }

    /// `journal-<pid>.json` → pid.
    static func pid(inJournalName name: String) -> Int32? {
        guard name.hasPrefix("journal-"), name.hasSuffix(".json") else { return nil }
        let digits = name.dropFirst("journal-".count).dropLast(".json".count)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return Int32(digits).flatMap { $0 > 0 ? $0 : nil }
    }

    /// `.journal-<pid>.json.<random>.tmp` → pid.
    static func pid(inTemporaryName name: String) -> Int32? {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return nil }
        let parts = name.dropFirst().split(separator: ".")
        guard parts.count == 4, parts[1] == "json" else { return nil }
        return pid(inJournalName: "\(parts[0]).json")
    }
}
