// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "duckprompt",
    products: [
        .library(name: "DuckPrompt", targets: ["DuckPrompt"]),
        .executable(name: "duckprompt", targets: ["duckprompt"]),
        .executable(name: "duckprompt-bench", targets: ["duckprompt-bench"]),
    ],
    targets: [
        .systemLibrary(name: "CPulseAudio", pkgConfig: "libpulse",
                       providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CEspeakNG", pkgConfig: "espeak-ng",
                       providers: [.apt(["libespeak-ng-dev"])]),
        .target(name: "DuckPrompt", dependencies: ["CPulseAudio", "CSndFile", "CEspeakNG"]),
        .target(name: "DuckPromptCLI", dependencies: ["DuckPrompt"]),
        .executableTarget(name: "duckprompt", dependencies: ["DuckPromptCLI"]),
        // Scripts/bench's measuring tool (Docs/performance.md); uses the library's package API.
        .executableTarget(name: "duckprompt-bench", dependencies: ["DuckPrompt"]),
        .testTarget(name: "DuckPromptTests", dependencies: ["DuckPrompt"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "DuckPromptCLITests", dependencies: ["DuckPromptCLI"]),
        .testTarget(name: "IntegrationTests", dependencies: ["DuckPrompt"]),
    ]
)
