import ArgumentParser
import EmberServer

// Before any task exists: the server's tasks run on its event loops (EventLoopExecutor).
EventLoopExecutor.adopt()
// What @main on an AsyncParsableCommand does, with the one async command named: through the
// existential, top-level code resolves `run()` to the synchronous requirement (which only prints
// the help).
do {
    var command = try await Ember.asyncParseAsRoot()
    if let serve = command as? Serve {
        try await serve.run()
    } else {
        try command.run()
    }
} catch {
    Ember.exit(withError: error)
}
