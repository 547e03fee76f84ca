import Foundation

/// One measured quantity: a tool (row) in a condition (column), several runs.
struct Series: Codable {
    /// 1…9, the figure numbers.
    var figure: Int
    /// The tool or workload, e.g. `paplay --latency-msec=20`, `N = 300`.
    var row: String
    /// The condition or quantity, e.g. `idle sink`, `with music`, `CPU s`.
    var column: String
    /// `ms`, `s`, `MiB`, `µs`, `count`, `/s`.
    var unit: String
    /// One value per run.
    var values: [Double]
    /// Per run, the value divided by the anchor's value in the same round (nil: no anchor).
    var ratios: [Double]?

    var summary: Summary? { Summary(values) }
    var ratio: Double? { ratios.flatMap { Summary($0)?.median } }
}

/// Median with min and max.
struct Summary {
    var median: Double, min: Double, max: Double, count: Int

    init?(_ values: [Double]) {
        let sorted = values.filter(\.isFinite).sorted()
        guard !sorted.isEmpty else { return nil }
        let mid = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
        count = sorted.count
    }

    /// `123 (110–140)` with a precision that suits the unit.
    func text(_ unit: String) -> String {
        "\(format(median, unit)) (\(format(min, unit))–\(format(max, unit)))"
    }
}

func format(_ v: Double, _ unit: String) -> String {
    switch unit {
    case "ms": return v >= 100 ? String(format: "%.0f", v) : String(format: "%.1f", v)
    case "s": return String(format: "%.3f", v)
    case "MiB": return String(format: "%.1f", v)
    case "µs": return v >= 100 ? String(format: "%.0f", v) : String(format: "%.2f", v)
    case "count": return String(format: "%.0f", v)
    case "%": return String(format: "%.2f", v)
    case "/s": return v >= 100 ? String(format: "%.0f", v) : String(format: "%.2f", v)
    default: return String(format: "%.3g", v)
    }
}

/// A target of the issue and where it stands on one server.
struct TargetResult: Codable {
    var target: String
    var measured: String
    var met: Bool?     // nil: not measured
}

/// Everything one `measure` run found on one server.
struct ServerResults: Codable {
    var server: String
    var serverVersion: String
    var runs: Int
    var series: [Series] = []
    var targets: [TargetResult] = []
    var notes: [String] = []
    var seconds: Double = 0

    func find(_ figure: Int, _ row: String, _ column: String) -> Series? {
        series.first { $0.figure == figure && $0.row == row && $0.column == column }
    }
}

/// Results that need no server (figure 6).
struct InProcessResults: Codable {
    var series: [Series] = []
    var targets: [TargetResult] = []
    var notes: [String] = []
}
