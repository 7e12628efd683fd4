import EmberPostgres
import GRPCCore

/// Responsible for: refusing Firestore calls at once with UNAVAILABLE while the shared store
/// (PostgreSQL) is out of reach, so no read is answered from a copy that may be behind and no
/// caller waits out a timeout: every unary call and RunQuery-like stream. Listen streams stay
/// open (their targets resume when the store answers again); the Write stream's commits are
/// refused by the log itself. Health calls always pass.
struct StoreGate: ServerInterceptor {
    let log: PostgresCommitLog
    static let passing: Set<String> = ["Listen", "Write"]

    func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>, context: ServerContext,
        next: @Sendable (StreamingServerRequest<Input>, ServerContext) async throws -> StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        if !log.isReachable, context.descriptor.service.fullyQualifiedService == "google.firestore.v1.Firestore",
           !StoreGate.passing.contains(context.descriptor.method) {
            return StreamingServerResponse(error: RPCError(code: .unavailable, message: "PostgreSQL is out of reach: try again"))
        }
        return try await next(request, context)
    }
}
