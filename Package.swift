// swift-tools-version:6.0
import PackageDescription

// The library, the CLI and the executable use FoundationEssentials, not Foundation: Foundation
// and its ICU add about 10 MB of RSS and several ms of start-up to every prompt
// (Docs/performance.md). With MemberImportVisibility, a file sees only the extension members of
// the modules it imports itself, so the compiler checks that nothing pulls Foundation back in.
//
// In release builds a concrete generic type (`[UInt64: Finished]`, `Set<String>`) is made by
// its metadata accessor, not by demangling its mangled name at run time, which looks each of
// its requirements' conformances up in a scan of every conformance record of the static
// binary, anew in each process: the handed-over `duckprompt play` spent 0.5 ms of its 3.6 ms
// of CPU there, and its exec → PlayFd came down from 4.97 to 4.75 ms (medians of 20, PulseAudio
// lab). The binary grows by 78 KB.
let moduleSettings: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release)),
]

let package = Package(
    name: "duckprompt",
    products: [
        .library(name: "DuckPrompt", targets: ["DuckPrompt"]),
        .executable(name: "duckprompt", targets: ["duckprompt"]),
        .executable(name: "duckprompt-bench", targets: ["duckprompt-bench"]),
    ],
    targets: [
        // A system library opened with dlopen on first use, its calls looked up into a table
        // (dynamic_library.c): for the three below, none of which is linked.
        .target(name: "CDynamicLibrary"),
        // libpulse's headers (libpulse-dev) and its calls through a table filled on first use,
        // not its libs, whose -lpulse would load it and 10 more libraries at every exec, also in
        // a command that hands its prompt to a running service and never calls it (issue 35).
        .target(name: "CPulseAudio", dependencies: ["CDynamicLibrary"]),
        // libsndfile's header (libsndfile1-dev) and its calls, opened likewise when a file is
        // first read (its 7 codec libraries with it).
        .target(name: "CSndFile", dependencies: ["CDynamicLibrary"]),
        // libespeak-ng's header only (/usr/include/espeak-ng, from libespeak-ng-dev): no
        // pkgConfig, whose libs would link -lespeak-ng into every process. The library is
        // opened with dlopen for `say` alone (Playback/EspeakLibrary.swift).
        .systemLibrary(name: "CEspeakNG", providers: [.apt(["libespeak-ng-dev"])]),
        // The C over libpipewire: a PipeWire node's volumes, each change in order
        // (node_volumes.c), and the default sink's name (default_sink.c); PipeWire/ is its
        // only caller. libpipewire's headers (libpipewire-0.3-dev) are where `pkg-config
        // --cflags libpipewire-0.3` says; not its libs, whose -lpipewire-0.3 would load it in
        // every process at start: it is opened with dlopen on first use (pw_library.c).
        .target(name: "CPipeWireNodes", dependencies: ["CDynamicLibrary"],
                cSettings: [.unsafeFlags(["-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2", "-D_REENTRANT"])]),
        // libsystemd's sd-bus, for the library's messages and its session-bus client (MPRIS
        // players and the bench's client of the service, DuckPrompt/Bus/), the service's bus
        // connection and the C vtable below.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        // Stand-ins for the Linux calls Swift cannot import (prctl is variadic): a header of
        // `static inline` functions, no link; Support/POSIX.swift is its one caller.
        .systemLibrary(name: "CLinux"),
        // The pure decisions: classify, route, duck plan, ramps, queue policy, the prompt's
        // lifecycle and plan, the journal's policy and bounds, the dump readers. It depends on
        // no C module and does no I/O, so the compiler keeps it pure; DuckPrompt, the I/O
        // shell, re-exports it.
        .target(name: "DuckPromptCore", swiftSettings: moduleSettings),
        .target(name: "DuckPrompt", dependencies: ["DuckPromptCore", "CPulseAudio", "CSndFile", "CEspeakNG", "CPipeWireNodes", "CSystemd", "CLinux"],
                swiftSettings: moduleSettings),
        // The D-Bus object's vtable (sd-bus's SD_BUS_METHOD macros), the one C file over sd-bus
        // (DuckPromptService/Bus/BusConnection.swift calls it; DuckPromptService.swift reads
        // its DP_BUS_* method numbers).
        .target(name: "CBusObject", dependencies: ["CSystemd"]),
        // `duckprompt serve`: the session-bus front end over a held Prompter (Docs/dbus.md).
        .target(name: "DuckPromptService", dependencies: ["DuckPrompt", "CSystemd", "CBusObject"],
                swiftSettings: moduleSettings),
        // `duckprompt lab`: a private server with emulated devices, COMMAND run against it, a
        // report of what a listener heard (Docs/lab.md); its listening is DuckPromptProbe's.
        .target(name: "DuckPromptLab", dependencies: ["DuckPrompt", "DuckPromptProbe", "DuckPromptService"],
                swiftSettings: moduleSettings),
        // `duckprompt speechd-module`: a speech-dispatcher output module over a held Prompter
        // (its protocol's state machine is DuckPromptCore's Speechd/).
        .target(name: "DuckPromptSpeechd", dependencies: ["DuckPrompt"], swiftSettings: moduleSettings),
        .target(name: "DuckPromptCLI", dependencies: ["DuckPrompt", "DuckPromptService", "DuckPromptLab", "DuckPromptProbe", "DuckPromptSpeechd"],
                swiftSettings: moduleSettings),
        // pcaudiolib's create_audio_device_object, defined to open nothing and exported, so that
        // libespeak-ng 1.51 binds to it and opens no stray stream on the default sink
        // (Sources/CEspeakNoAudio/no_audio_device.c says why).
        .target(name: "CEspeakNoAudio"),
        // Sources/duckprompt/link: a linker script found before the system's libraries, so that
        // the command loads one library fewer at exec (issue 35): libstdc++ linked from its
        // archive (the file says why).
        .executableTarget(name: "duckprompt", dependencies: ["DuckPromptCLI", "CEspeakNoAudio"], exclude: ["link"],
                          swiftSettings: moduleSettings,
                          linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=create_audio_device_object",
                                                         "-L", Context.packageDirectory + "/Sources/duckprompt/link"])]),
        // Scripts/make-man's generator of the man pages' sources (ManPage.swift); not installed.
        .executableTarget(name: "duckprompt-man", dependencies: ["DuckPromptCLI"]),
        // Measuring aids: tone streams and stamped monitor recordings (BenchProbe), for the
        // bench, the integration tests and the lab's listening; not shipped in the library an
        // app embeds. It reaches libpulse only through the library's package API (a
        // PulseConnection, its PlaybackStreams and RecordStreams, Sources/DuckPrompt/Pulse/).
        .target(name: "DuckPromptProbe", dependencies: ["DuckPrompt"],
                swiftSettings: moduleSettings),
        // Scripts/bench's measuring tool (Docs/performance.md); uses the library's package API,
        // its SessionBusClient as the D-Bus client of `duckprompt serve` (BusClient.swift).
        .executableTarget(name: "duckprompt-bench", dependencies: ["DuckPrompt", "DuckPromptProbe", "DuckPromptService"]),
        // What an app author copies first: a held Prompter, three prompts, their events.
        // Built with everything (Scripts/test builds it; an integration test runs it).
        .executableTarget(name: "held-prompter-example", dependencies: ["DuckPrompt"],
                          path: "Examples/HeldPrompter"),
        .testTarget(name: "DuckPromptTests", dependencies: ["DuckPrompt"],
                    resources: [.copy("Fixtures")]),
        // What the CLI and integration tests share: the process runner, rigs of emulated
        // devices and players, test audio, waits, time limits (no C module, no library code).
        .target(name: "DuckPromptTestSupport", path: "Tests/DuckPromptTestSupport"),
        .testTarget(name: "DuckPromptCLITests", dependencies: ["DuckPromptCLI", "DuckPromptTestSupport"]),
        .testTarget(name: "DuckPromptServiceTests", dependencies: ["DuckPromptService"]),
        .testTarget(name: "DuckPromptLabTests", dependencies: ["DuckPromptLab", "DuckPromptProbe", "DuckPrompt"]),
        .testTarget(name: "IntegrationTests", dependencies: ["DuckPrompt", "DuckPromptProbe", "DuckPromptTestSupport"]),
    ]
)
