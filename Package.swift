// swift-tools-version:6.0
// Ember: an embeddable realtime document store. Layers follow ARCHITECTURE.md:
// EmberModel (pure values, paths, mutations, queries) <- EmberStorage (persistence) <-
// EmberBackend (authoritative store) <- EmberCore (sync engine, views, listeners) <- Ember (public API).
import PackageDescription

// EMBER_CORE_ONLY=1 leaves out the server and its gRPC dependencies (and their BoringSSL): the
// ThreadSanitizer run of `make test` (its own scratch path) builds only what it tests.
let coreOnly = Context.environment["EMBER_CORE_ONLY"] == "1"
/// EmberRemote (a server as the documents' backend), for the public API and the C ABI.
let remote: [Target.Dependency] = coreOnly ? [] : ["EmberRemote"]

let package = Package(
    name: "Ember",
    products: [
        .library(name: "Ember", targets: ["Ember"]),
        .executable(name: "ember-demo", targets: ["EmberDemo"]),
        .executable(name: "ember-bench", targets: ["EmberBench"]),
        // The C ABI (include/ember.h): libember.so exports only ember_* and has a SONAME.
        // (The product is `ember-c` so that `ember` names the command; the Makefile and setup.py
        // link libember-c.so as libember.so.)
        .library(name: "ember-c", type: .dynamic, targets: ["EmberC"]),
    ] + (coreOnly ? [] : [
        // `ember serve`: the Cloud Firestore v1 gRPC API over the same backend.
        .executable(name: "ember", targets: ["EmberCLI"]),
        .executable(name: "ember-server-bench", targets: ["EmberServerBench"]),
    ]),
    dependencies: coreOnly ? [] : [
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // ID tokens on `ember serve`: RS256/ES256 from a JWKS, HS256 from a secret.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // TLS files checked at start (gRPC's transport already builds on it).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The server's connection guard, and the tree's HTTP/1.1 port (NIOHTTP1).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // SHA-1 for the tree's node hashes (REST ETags), as the Firebase SDKs compute them.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // Several `ember serve` instances on one PostgreSQL (EmberPostgres).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // A prefetch hint for passes over many children (header-only C: Swift has no prefetch).
        .target(name: "CEmberMemory"),
        // Locks, conditions and queue assertions every layer shares (pthread-based: TSan-clean).
        .target(name: "EmberConcurrency"),
        .target(name: "EmberModel", dependencies: ["CEmberMemory", "EmberConcurrency"]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "EmberStorage", dependencies: ["EmberModel", "EmberConcurrency", "CSQLite"]),
        .target(name: "EmberBackend", dependencies: ["EmberModel", "EmberStorage", "EmberConcurrency"]),
        // Two scheduler calls the event thread needs (CPU placement) that Swift's Glibc lacks.
        .target(name: "CEmberThreads"),
        .target(name: "EmberCore", dependencies: ["EmberModel", "EmberStorage", "EmberBackend", "EmberConcurrency", "CEmberThreads"]),
        // With the server's targets, Ember and EmberC also open clients of a server
        // (`FirestoreSettings.host`, `ember_settings.host`) through EmberRemote; the core-only build
        // refuses a host (`#if canImport(EmberRemote)`).
        .target(name: "Ember", dependencies: ["EmberCore", "EmberConcurrency"] + remote),
        // Firestore security rules: parser and evaluator over EmberModel values. No
        // gRPC: the server wires it in; nothing else depends on it.
        .target(name: "EmberRules", dependencies: ["EmberModel"]),
        // Realtime Database security rules: the tree's rules language over EmberModel's
        // tree values. No server code: the tree port wires it in.
        .target(name: "EmberTreeRules", dependencies: ["EmberModel"]),
        .systemLibrary(name: "CEmberABI", path: "Sources/CEmberABI"),
        .target(name: "EmberC", dependencies: ["EmberCore", "EmberConcurrency", "CEmberABI"] + remote,
                linkerSettings: [.unsafeFlags(["-Xlinker", "--version-script=\(Context.packageDirectory)/bindings/c/ember.map",
                                               "-Xlinker", "-soname=libember.so.0"])]),
        .executableTarget(name: "EmberDemo", dependencies: ["Ember"]),
        .executableTarget(name: "EmberCrashWriter", dependencies: ["EmberCore"]),
        .executableTarget(name: "EmberBench", dependencies: ["Ember", "EmberCore", "EmberStorage", "EmberConcurrency"], path: "bench/swift"),
        .testTarget(name: "EmberConcurrencyTests", dependencies: ["EmberConcurrency"]),
        .testTarget(name: "EmberModelTests", dependencies: ["EmberModel", "EmberConcurrency"]),
        .testTarget(name: "EmberStorageTests", dependencies: ["EmberStorage", "EmberCore", "EmberConcurrency"]),
        .testTarget(name: "EmberBackendTests", dependencies: ["EmberBackend", "EmberConcurrency"]),
        .testTarget(name: "EmberCoreTests", dependencies: ["EmberCore", "EmberConcurrency", "CEmberThreads"]),
        .testTarget(name: "EmberTests", dependencies: ["Ember", "EmberConcurrency"]),
        // Resources/ (the differential rules and cases) is read through #filePath, not bundled.
        .testTarget(name: "EmberRulesTests", dependencies: ["EmberRules", "EmberModel"], exclude: ["Resources"]),
        .testTarget(name: "EmberTreeRulesTests", dependencies: ["EmberTreeRules", "EmberModel"]),
    ] + (coreOnly ? [] : serverTargets)
)

// The server: generated wire types (`make proto`), the service over the backend, the
// command line, its benchmark and tests. Nothing in the targets above depends on them.
var serverTargets: [Target] {
    [
        .target(name: "EmberFirestoreProto", dependencies: [
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        ]),
        // The one Firestore wire codec (values, documents, names, times) of the server and its clients.
        .target(name: "EmberWire", dependencies: [
            "EmberModel", "EmberFirestoreProto",
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        ]),
        .target(name: "EmberServer", dependencies: [
            "EmberModel", "EmberStorage", "EmberBackend", "EmberConcurrency", "EmberWire", "EmberFirestoreProto", "EmberRules", "EmberTreeRules",
            "EmberPostgres",
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The documents and the change log of several `ember serve` instances on one PostgreSQL
        // (docs/scale-out.md). Beside the backend: nothing in the core depends on it.
        .target(name: "EmberPostgres", dependencies: [
            "EmberModel", "EmberBackend", "EmberConcurrency",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // A server as the core's backend: a BackendLink over the Listen and Write
        // streams and the unary calls. Beside the core: nothing in EmberCore imports it.
        .target(name: "EmberRemote", dependencies: [
            "EmberModel", "EmberStorage", "EmberBackend", "EmberConcurrency", "EmberWire", "EmberFirestoreProto",
            // The tree's realtime protocol (WebSocket) to a tree host.
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            // MD5 for existence filters' bloom filters, as the server computes them.
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .executableTarget(name: "EmberCLI", dependencies: [
            "EmberServer",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "EmberServerBench", dependencies: [
            "EmberFirestoreProto",
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        ], path: "bench/server-swift"),
        // On the PostgreSQL a test run starts (Tests/scripts/with_postgres.py).
        .testTarget(name: "EmberPostgresTests", dependencies: ["EmberPostgres", "EmberModel", "EmberBackend", "EmberStorage", "EmberConcurrency"]),
        // A Firestore server whose watch messages a test scripts (the SDKs' spec scenarios).
        .target(name: "ScriptedFirestore", dependencies: [
            "EmberFirestoreProto", "EmberConcurrency",
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], path: "Tests/Support/ScriptedFirestore"),
        // The same, driven over stdin/stdout by tests in other languages (Tests/remote).
        .executableTarget(name: "EmberScriptedFirestore", dependencies: ["ScriptedFirestore", "EmberFirestoreProto"],
                          path: "Tests/Support/ScriptedFirestoreTool"),
        .testTarget(name: "EmberRemoteTests", dependencies: [
            "EmberRemote", "EmberServer", "EmberWire", "EmberCore", "EmberModel", "EmberStorage", "EmberBackend", "Ember", "EmberConcurrency",
            "ScriptedFirestore",
            .product(name: "JWTKit", package: "jwt-kit"),
        ]),
        // A Swift client process of the mixed-language tests (Tests/remote): Ember over `host`.
        .executableTarget(name: "EmberHostClient", dependencies: ["Ember", "EmberConcurrency"]),
        // The remote benchmark's clients (bench/remote): the public API over `host`, and the
        // internal modules where the figure needs `RemoteBackend.stats` (release, `make bench-remote`).
        .executableTarget(name: "EmberRemoteBench", dependencies: [
            "Ember", "EmberCore", "EmberModel", "EmberRemote", "EmberStorage", "EmberBackend", "EmberConcurrency",
        ], path: "bench/remote-swift"),
        .testTarget(name: "EmberServerTests", dependencies: [
            "EmberServer", "EmberWire", "EmberFirestoreProto", "EmberModel", "EmberBackend", "EmberStorage",
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
    ]
}
