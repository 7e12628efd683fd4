import EmberModel
import GRPCCore
import GRPCNIOTransportHTTP2

/// Responsible for: a client's connection to one of several `ember serve` instances (the
/// servers of a host list): a gRPC target naming them all as one endpoint, so gRPC's pick-first
/// balancer connects to the first that answers, in the list's order, and when that connection
/// fails (the instance killed, restarted, unreachable) the next attempt starts again from the
/// top and moves on to the next that answers. Every stream then reconnects as after any failure
/// (with backoff), and resumes with its token on the new instance. Entries must be IP addresses
/// (`localhost` is 127.0.0.1): names are resolved only for a single host.
struct RemoteHosts: ResolvableTarget, Sendable {
    let addresses: [GRPCNIOTransportCore.SocketAddress]

    init(_ list: [RemoteAddress]) throws {
        addresses = try list.map { a in
            let host = a.host == "localhost" ? "127.0.0.1" : a.host
            if host.contains(":") { return .ipv6(host: host, port: a.port) }
            guard host.split(separator: ".", omittingEmptySubsequences: false).count == 4,
                  host.allSatisfy({ $0.isNumber || $0 == "." }) else {
                throw EmberError.invalidArgument("Invalid host list: '\(a.description)' is not an IP address (a list of several servers takes IP addresses or localhost; a name only alone)")
            }
            return .ipv4(host: host, port: a.port)
        }
    }

    /// Resolves a `RemoteHosts` to its one endpoint, the same at every asking.
    struct Resolver: NameResolverFactory, Sendable {
        func resolver(for target: RemoteHosts) -> NameResolver {
            let result = NameResolutionResult(endpoints: [Endpoint(addresses: target.addresses)], serviceConfig: nil)
            return NameResolver(names: RPCAsyncSequence(wrapping: Repeating(element: result)), updateMode: .pull)
        }
    }

    /// A sequence that answers `element` at every `next()` (a pull resolver's fixed answer).
    struct Repeating: AsyncSequence, Sendable {
        let element: NameResolutionResult
        struct AsyncIterator: AsyncIteratorProtocol {
            let element: NameResolutionResult
            mutating func next() async throws -> NameResolutionResult? { element }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(element: element) }
    }
}
