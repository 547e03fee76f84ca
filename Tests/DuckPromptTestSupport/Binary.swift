import Foundation

/// The `duckprompt` executable under test: `DUCKPROMPT_BIN`, else the one built next to the
/// test bundle (SwiftPM puts both in .build/CONFIGURATION); nil when there is none.
package let duckpromptBinaryURL: URL? = {
    let fm = FileManager.default
    if let path = ProcessInfo.processInfo.environment["DUCKPROMPT_BIN"], !path.isEmpty {
        return URL(fileURLWithPath: path)
    }
    var dirs: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
    let arg0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    dirs += [arg0.deletingLastPathComponent(), arg0.deletingLastPathComponent().deletingLastPathComponent()]
    for dir in dirs {
        let candidate = dir.appendingPathComponent("duckprompt")
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
           fm.isExecutableFile(atPath: candidate.path) {
            return candidate
        }
    }
    return nil
}()

/// `duckpromptBinaryURL`'s path, or "duckprompt" (found on PATH) when none was built.
package var duckpromptBinary: String { duckpromptBinaryURL?.path ?? "duckprompt" }
