import GRPCCore

/// Responsible for: reading `authorization: Bearer <token>` from every call's metadata, turning
/// it into a `Caller` (UNAUTHENTICATED for a token that does not verify), and binding it for the
/// call: its handler, and for streaming calls the response producer that runs after it.
struct AuthInterceptor: ServerInterceptor {
    let verifier: TokenVerifier

    func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>, context: ServerContext,
        next: @Sendable (StreamingServerRequest<Input>, ServerContext) async throws -> StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        let caller: Caller
        do {
            caller = try await verifier.caller(authorization: request.metadata[stringValues: "authorization"].first(where: { _ in true }))
        } catch let e as RPCError {
            return StreamingServerResponse(error: e)
        }
        var response = try await Caller.$current.withValue(caller) { try await next(request, context) }
        if case .success(var contents) = response.accepted {
            let producer = contents.producer
            contents.producer = { writer in try await Caller.$current.withValue(caller) { try await producer(writer) } }
            response.accepted = .success(contents)
        }
        return response
    }
}
