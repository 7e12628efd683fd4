// A writer for the kill -9 test (Tests/EmberStorageTests/CrashDurabilityTests.swift): it opens
// the durable database at argv[1] and writes batches from number argv[2] on, forever, until it
// is killed. Batch n sets items/n-a, items/n-b, items/n-c and increments counters/c.total by 1,
// so a half-applied or twice-applied batch is visible. It prints "Q n" once batch n is queued
// (durably, `write` returned) and "A n" once the backend acknowledged it; every few dozen batches
// it turns the network off for a while, so kills also hit writes waiting in the queue.
// With argv[3] = "tree" it writes the Realtime-Database tree instead: write n is one multi-path
// update of /items/n-a, /items/n-b and /items/n-c.
import EmberModel
import EmberCore
#if canImport(Glibc)
import Glibc
#endif

func say(_ s: String) {
    var line = s + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

let args = CommandLine.arguments
guard args.count >= 3, let start = Int64(args[2]) else {
    say("usage: EmberCrashWriter <path> <first-batch-number> [tree]")
    exit(2)
}

let client: EmberClient
do {
    client = try EmberClient(options: EmberOptions(path: args[1]))
} catch {
    say("E \(error)")
    exit(1)
}
say("OPEN")

var n = start
let tree = args.count >= 4 && args[3] == "tree"
while tree {
    let ops = ["a", "b", "c"].map { part in
        TreeWriteOp(path: TreePath(unchecked: ["items", "\(n)-\(part)"]),
                    value: .object(TreeObject(["n": .int(n), "part": .string(part), "pad": .string(String(repeating: "x", count: 200))])))
    }
    let batch = n
    do {
        try client.treeWrite(ops) { err in say(err == nil ? "A \(batch)" : "R \(batch) \(err!)") }
    } catch {
        say("E \(error)")
        exit(1)
    }
    say("Q \(batch)")
    if n % 40 == 0 { try? client.disableNetwork() }
    if n % 40 == 15 { try? client.enableNetwork() }
    n += 1
    if n % 8 == 0 { usleep(1000) }
}
while true {
    let muts: [Mutation] = ["a", "b", "c"].map { part in
        Mutation(key: try! DocumentKey(parsing: "items/\(n)-\(part)"),
                 kind: .set(MapValue(["n": .int(n), "part": .string(part), "pad": .string(String(repeating: "x", count: 200))])))
    } + [Mutation(key: try! DocumentKey(parsing: "counters/c"), kind: .patch(MapValue(), mask: []),
                  transforms: [FieldTransform(path: try! FieldPath(parsing: "total"), op: .increment(.int(1)))])]
    let batch = n
    do {
        try client.write(muts) { err in say(err == nil ? "A \(batch)" : "R \(batch) \(err!)") }
    } catch {
        say("E \(error)")
        exit(1)
    }
    say("Q \(batch)")
    if n % 40 == 0 { try? client.disableNetwork() }
    if n % 40 == 15 { try? client.enableNetwork() }
    n += 1
    if n % 8 == 0 { usleep(1000) }
}
