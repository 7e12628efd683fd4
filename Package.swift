// swift-tools-version:6.0
// Ember: an embeddable realtime document store. Layers follow ../shared/STYLE.md:
// EmberModel (pure values, paths, mutations, queries) <- EmberStorage (persistence) <-
// EmberBackend (authoritative store) <- EmberCore (sync engine, views, listeners) <- Ember (public API).
import PackageDescription

let swift5: [SwiftSetting] = [.swiftLanguageMode(.v5)]

let package = Package(
    name: "Ember",
    products: [
        .library(name: "Ember", targets: ["Ember"]),
        .executable(name: "ember-demo", targets: ["EmberDemo"]),
        .executable(name: "ember-bench", targets: ["EmberBench"]),
        // The C ABI (include/ember.h): libember.so exports only ember_* and has a SONAME.
        .library(name: "ember", type: .dynamic, targets: ["EmberC"]),
    ],
    targets: [
        .target(name: "EmberModel", swiftSettings: swift5),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "EmberStorage", dependencies: ["EmberModel", "CSQLite"], swiftSettings: swift5),
        .target(name: "EmberBackend", dependencies: ["EmberModel", "EmberStorage"], swiftSettings: swift5),
        .target(name: "EmberCore", dependencies: ["EmberModel", "EmberStorage", "EmberBackend"], swiftSettings: swift5),
        .target(name: "Ember", dependencies: ["EmberCore"], swiftSettings: swift5),
        .systemLibrary(name: "CEmberABI", path: "Sources/CEmberABI"),
        .target(name: "EmberC", dependencies: ["EmberCore", "CEmberABI"], swiftSettings: swift5,
                linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/bindings/c/ember.map",
                                               "-Xlinker", "-soname=libember.so.0"])]),
        .executableTarget(name: "EmberDemo", dependencies: ["Ember"], swiftSettings: swift5),
        .executableTarget(name: "EmberCrashWriter", dependencies: ["EmberCore"], swiftSettings: swift5),
        .executableTarget(name: "EmberBench", dependencies: ["Ember", "EmberCore", "EmberStorage"], path: "bench/swift", swiftSettings: swift5),
        .testTarget(name: "EmberModelTests", dependencies: ["EmberModel"], swiftSettings: swift5),
        .testTarget(name: "EmberStorageTests", dependencies: ["EmberStorage", "EmberCore"], swiftSettings: swift5),
        .testTarget(name: "EmberBackendTests", dependencies: ["EmberBackend"], swiftSettings: swift5),
        .testTarget(name: "EmberCoreTests", dependencies: ["EmberCore"], swiftSettings: swift5),
        .testTarget(name: "EmberTests", dependencies: ["Ember"], swiftSettings: swift5),
    ]
)
