// ember-scripted-firestore: a ScriptedFirestore driven over stdin/stdout, for tests in other
// languages (Tests/remote/test_watch_scenarios.py). The first line out is {"port": N}; then
// each JSON line in is one command, answered by one JSON line out:
//
//   {"op": "next_listen", "timeout": 10}  -> {"seen": "add", "target": 2, "path": "c", "token": null, "limit": null}
//                                            {"seen": "remove", "target": 2} | {"seen": "closed"}
//   {"op": "pending_listens"}             -> {"seen_list": [...]}
//   {"op": "send", "messages": [M, ...]}  -> {"ok": true}
//   {"op": "fail_listen"}                 -> {"ok": true}
//   {"op": "next_write", "timeout": 10}   -> {"seen": "writes", "paths": ["c/a"]} | {"seen": "empty"} | {"seen": "closed"}
//   {"op": "ack", "version": 3000}        -> {"ok": true}
//   {"op": "unary_calls"}                 -> {"calls": [...]}
//   {"op": "stop"}                        -> {"ok": true}, then it exits
//
// A message M is one of {"added": [ids]}, {"current": [ids], "token": T}, {"reset": [ids]},
// {"no_change": [ids], "token": T}, {"global": readTime, "token": T}, {"removed": [ids], "code": C},
// {"doc": path, "version": V, "fields": {...}, "in": [ids], "out": [ids]},
// {"deleted": path, "read_time": R, "out": [ids]}, {"removed_doc": path, "out": [ids]},
// {"filter": id, "count": N}. Times are µs. A command that fails answers {"error": "..."}.
import EmberFirestoreProto
import Foundation
import ScriptedFirestore

func emit(_ object: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

func ids(_ v: Any?) -> [Int32] { (v as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.int32Value } }
func int64(_ v: Any?) -> Int64? { (v as? NSNumber)?.int64Value }

func message(_ m: [String: Any]) throws -> ListenResponse {
    let token = m["token"] as? String
    if let v = m["added"] { return .target(.add, ids(v)) }
    if let v = m["current"] { return .target(.current, ids(v), token: token) }
    if let v = m["reset"] { return .target(.reset, ids(v)) }
    if let v = m["no_change"] { return .target(.noChange, ids(v), token: token) }
    if let t = int64(m["global"]) { return .global(t, token: token) }
    if let v = m["removed"] {
        let code = (m["code"] as? NSNumber)?.int32Value ?? 0
        var r = ListenResponse.target(.remove, ids(v))
        if code != 0 { r = .removed(ids(v).first ?? 0, code: code, message: "scripted") }
        return r
    }
    if let path = m["doc"] as? String, let version = int64(m["version"]) {
        let fields = (m["fields"] as? [String: Any] ?? [:]).mapValues { v -> Any in (v as? NSNumber).map { $0.intValue } ?? "\(v)" }
        return .doc(path, version: version, fields, in: ids(m["in"]), out: ids(m["out"]))
    }
    if let path = m["deleted"] as? String { return .deleted(path, readTime: int64(m["read_time"]), out: ids(m["out"])) }
    if let path = m["removed_doc"] as? String { return .removedDoc(path, out: ids(m["out"])) }
    if let id = m["filter"] as? NSNumber, let count = m["count"] as? NSNumber { return .filter(id.int32Value, count: count.int32Value) }
    throw ScriptError("unknown message \(m)")
}

func describe(_ s: ListenSeen) -> [String: Any] {
    switch s {
    case .add(let id, let path, let token, let limit):
        return ["seen": "add", "target": Int(id), "path": path, "token": token ?? NSNull(), "limit": limit.map { Int($0) } ?? NSNull()]
    case .remove(let id): return ["seen": "remove", "target": Int(id)]
    case .closed: return ["seen": "closed"]
    }
}

let server: ScriptedFirestore
do {
    server = try ScriptedFirestore()
} catch {
    emit(["error": "\(error)"])
    exit(1)
}
emit(["port": server.port])
while let line = readLine() {
    guard let data = line.data(using: .utf8), let cmd = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
          let op = cmd["op"] as? String else {
        emit(["error": "not a command: \(line)"])
        continue
    }
    let timeout = (cmd["timeout"] as? NSNumber)?.doubleValue ?? 10
    do {
        switch op {
        case "next_listen": emit(describe(try server.nextListen(timeout: timeout)))
        case "pending_listens": emit(["seen_list": server.pendingListens().map(describe)])
        case "send":
            server.send(try (cmd["messages"] as? [[String: Any]] ?? []).map(message))
            emit(["ok": true])
        case "fail_listen":
            server.failListen()
            emit(["ok": true])
        case "next_write":
            switch try server.nextWrite(timeout: timeout) {
            case .writes(let paths): emit(["seen": "writes", "paths": paths])
            case .empty: emit(["seen": "empty"])
            case .closed: emit(["seen": "closed"])
            }
        case "ack":
            try server.ack(version: int64(cmd["version"]) ?? 0)
            emit(["ok": true])
        case "unary_calls": emit(["calls": server.unaryCalls])
        case "stop":
            server.stop()
            emit(["ok": true])
            exit(0)
        default: emit(["error": "unknown op \(op)"])
        }
    } catch {
        emit(["error": "\(error)"])
    }
}
server.stop()
