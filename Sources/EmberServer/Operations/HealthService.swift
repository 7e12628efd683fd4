import EmberFirestoreProto
import GRPCCore

/// Responsible for: the gRPC health checking protocol (`grpc.health.v1.Health`) on the Firestore
/// port: the server as a whole ("") and the Firestore service by name, from `ServerHealth`.
/// Check answers the status now (NOT_FOUND for another service); Watch sends it, then each
/// change, until the caller ends the call or the server stops (after NOT_SERVING). Needs no token.
struct HealthService: Grpc_Health_V1_Health.SimpleServiceProtocol {
    typealias Response = Grpc_Health_V1_HealthCheckResponse
    let health: ServerHealth
    /// The services a caller may name ("" is the server).
    static let known: Set<String> = ["", "google.firestore.v1.Firestore", "grpc.health.v1.Health"]
    /// How often Watch looks at the status.
    static let watchInterval: Duration = .milliseconds(200)

    func check(request: Grpc_Health_V1_HealthCheckRequest, context: ServerContext) async throws -> Response {
        guard HealthService.known.contains(request.service) else {
            throw RPCError(code: .notFound, message: "No service named '\(request.service)' on this server")
        }
        return response(health.status)
    }

    func watch(request: Grpc_Health_V1_HealthCheckRequest, response: RPCWriter<Response>, context: ServerContext) async throws {
        guard HealthService.known.contains(request.service) else {
            var r = Response()
            r.status = .serviceUnknown
            try await response.write(r)
            return
        }
        var last: ServerHealth.Status?
        while !Task.isCancelled {
            let now = health.status
            if now != last {
                try await response.write(self.response(now))
                last = now
            }
            if health.isStopping { return }
            try? await Task.sleep(for: HealthService.watchInterval)
        }
    }

    private func response(_ s: ServerHealth.Status) -> Response {
        var r = Response()
        r.status = s == .serving ? .serving : .notServing
        return r
    }
}
