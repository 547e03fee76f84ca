import Dispatch
import DuckPrompt
import FoundationEssentials
import Glibc

enum DevicesCommand {
    static let scanner = ArgumentScanner(
        valued: CommonOptions.valued.union(["device", "from"]),
        flags: ["help", "json", "watch"],
        short: CommonOptions.short.merging(["d": "device"]) { a, _ in a })

    static func run(_ args: [String], routeOnly: Bool) throws -> Int32 {
        let verb = routeOnly ? "route" : "devices"
        let r = try scanner.scan(args, verb: verb)
        if r.has("help") { print(routeOnly ? Help.route : Help.devices); return 0 }
        guard r.positionals.isEmpty else {
            throw UsageError("\(verb) takes no arguments, got '\(r.positionals[0])'")
        }
        let json = r.has("json")
        let request = r.last("device").map(DeviceRequest.init(parsing:))
        let config = try DuckPromptConfig.load()
        if r.has("watch") {
            guard !routeOnly else { throw UsageError("--watch is an option of devices, not route") }
            guard r.last("from") == nil else { throw UsageError("--watch follows a live server; it cannot read --from a file") }
            return try watch(request: request, config: config, server: try CommonOptions.server(r), json: json)
        }
        let listing: DeviceListing
        if let path = r.last("from") {
            listing = try DuckPrompt.devices(fromDump: path, request: request, config: config)
        } else {
            let server = try CommonOptions.server(r)
            listing = try DuckPrompt.devicesBlocking(request: request, config: config, server: server)
            for note in listing.recoveryNotes { DuckPromptCLI.printError(note) }
        }
        if json {
            print(Output.devicesJSON(listing))
        } else if routeOnly {
            guard let route = listing.route else { throw listing.routeError! }
            print("\(route.sink.name)\t\(route.classification.kind.rawValue)\t\(route.rule)\t\(route.reason)")
        } else {
            print(Output.devicesTable(listing))
        }
        if routeOnly, listing.route == nil, let error = listing.routeError {
            DuckPromptCLI.printError(error.message)
            return error.exitCode
        }
        return 0
    }

    /// Prints the table (or one JSON line), then one line per change until interrupted.
    static func watch(request: DeviceRequest?, config: DuckPromptConfig, server: ServerOptions, json: Bool) throws -> Int32 {
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP])
        let task = Task {
            for try await update in DuckPrompt.watchDevices(request: request, config: config, server: server) {
                if update.changes.isEmpty {
                    Output.emit(json ? Output.devicesJSON(update.listing, compact: true, event: "devices")
                                     : Output.devicesTable(update.listing))
                    continue
                }
                for change in update.changes {
                    Output.emit(json ? Output.changeJSON(change, update.listing) : Output.changeLine(change, update.listing))
                }
            }
        }
        signals.onSignal { task.cancel() }
        do {
            try waitForTask { try await task.value }.get()
        } catch is CancellationError {}
        if let signal = signals.received { return 128 + signal }
        return 0
    }
}
