import DuckPrompt
import DuckPromptProbe
import Foundation

/// Figure 6: classification and routing, and dump parsing, in this process.
enum InProcessBench {
    /// Every sink the fixture dumps hold (pactl text, pacmd, JSON, pw-dump, localised).
    static func fixtureSinks(in directory: String) -> (sinks: [Sink], pactlTexts: [String]) {
        var sinks: [Sink] = [], texts: [String] = []
        let files = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).sorted()
        for file in files where file.hasSuffix(".txt") || file.hasSuffix(".json") {
            guard let text = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8),
                  let read = try? SinkDumpReader.read(text) else { continue }
            sinks += read
            if SinkDumpReader.detectFormat(text) == .pactlText, text.contains("Sink #") { texts.append(text) }
        }
        return (sinks, texts)
    }

    /// `count` sinks made from the fixtures, each with its own name and index.
    static func manySinks(_ pool: [Sink], count: Int) -> [Sink] {
        (0..<count).map { i in
            var sink = pool[i % pool.count]
            sink.name += "-\(i)"
            sink.index = UInt32(i)
            return sink
        }
    }

    /// A pactl text dump of at least `bytes`: the fixture dumps again and again, sinks renumbered.
    static func bigDump(_ texts: [String], bytes: Int) -> (text: String, sinks: Int) {
        var out = "", n = 0
        out.reserveCapacity(bytes + 100_000)
        while out.utf8.count < bytes {
            for text in texts {
                for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                    if line.hasPrefix("Sink #") {
                        out += "Sink #\(n)\n"
                        n += 1
                    } else if line.trimmingCharacters(in: .whitespaces).hasPrefix("Name: ") {
                        out += "\(line)-\(n)\n"
                    } else {
                        out += line + "\n"
                    }
                }
                out += "\n"
            }
        }
        return (out, n)
    }

    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = monotonicNanoseconds()
        try body()
        return Double(monotonicNanoseconds() - start) / 1e9
    }

    static func run(fixtures: String, runs: Int, log: (String) -> Void) throws -> InProcessResults {
        var results = InProcessResults()
        let (pool, texts) = fixtureSinks(in: fixtures)
        guard !pool.isEmpty, !texts.isEmpty else { throw BenchError("no sink dumps found under \(fixtures)") }
        let count = 10_000
        let snapshot = Snapshot(sinks: manySinks(pool, count: count), defaultSinkName: nil)
        let dump = bigDump(texts, bytes: 10 << 20)
        var sinksInDump = dump.sinks
        let small = bigDump(texts, bytes: 1 << 20)
        let smallMegabytes = Double(small.text.utf8.count) / Double(1 << 20)
        var smallPerSink: [Double] = []
        var listing: [Double] = [], classifyOnly: [Double] = [], parse: [Double] = [], parsePerSink: [Double] = []
                let megabytes = Double(dump.text.utf8.count) / Double(1 << 20)
        for _ in 0..<runs {
            var routed = ""
            listing.append(seconds {
                let result = DeviceListing(snapshot: snapshot)
                routed = result.route?.sink.name ?? "none"
            } * 1e6 / Double(count))
            classifyOnly.append(seconds {
                for sink in snapshot.sinks { _ = Classifier.classify(sink) }
            } * 1e6 / Double(count))
            var parsed = 0
            let t = try seconds { parsed = try SinkDumpReader.readSnapshot(small.text).sinks.count }
            smallPerSink.append(t * 1e6 / Double(parsed))
            log("10 000 sinks: \(format(listing.last!, "µs")) µs per sink (route: \(routed)); "
                + "\(format(smallMegabytes, "MiB")) MiB dump: \(format(t, "s")) s")
        }
        // The 10 MiB dump, once a run (about 2.6 s each).
        for _ in 0..<runs {
            var parsed = 0
            let t = try seconds { parsed = try SinkDumpReader.readSnapshot(dump.text).sinks.count }
            guard parsed >= dump.sinks else { throw BenchError("the big dump read \(parsed) sinks of \(dump.sinks)") }
            sinksInDump = parsed
            parse.append(t)
            parsePerSink.append(t * 1e6 / Double(parsed))
            log("\(format(megabytes, "MiB")) MiB dump: \(format(t, "s")) s")
        }
        let row = "\(count) sinks (\(pool.count) fixture sinks, renamed)"
        results.series.append(Series(figure: 6, row: "classify and route " + row, column: "per sink", unit: "µs",
                                     values: listing))
        results.series.append(Series(figure: 6, row: "classify only, " + row, column: "per sink", unit: "µs",
                                     values: classifyOnly))
        results.series.append(Series(figure: 6, row: "parse a \(format(megabytes, "MiB")) MiB pactl dump "
                                     + "(\(sinksInDump) sinks)", column: "whole dump", unit: "s", values: parse))
        results.series.append(Series(figure: 6, row: "parse a \(format(megabytes, "MiB")) MiB pactl dump "
                                     + "(\(sinksInDump) sinks)", column: "per sink", unit: "µs", values: parsePerSink))
        results.series.append(Series(figure: 6, row: "parse a \(format(smallMegabytes, "MiB")) MiB pactl dump "
                                     + "(\(small.sinks) sinks)", column: "per sink", unit: "µs", values: smallPerSink))
        if let m = Summary(listing)?.median {
            results.targets.append(TargetResult(target: "Classification and routing under 5 µs per sink",
                                                measured: "\(format(m, "µs")) µs per sink", met: m < 5))
        }
        if let m = Summary(parse)?.median {
            results.targets.append(TargetResult(target: "Reading a \(format(megabytes, "MiB")) MiB pactl dump under 1 s",
                                                measured: "\(format(m, "s")) s (\(sinksInDump) sinks)", met: m < 1))
        }
        return results
    }
}
