// Responsible for: the peers' (a)/(b)/(c) figures, read from the results table of
// peers/README.md, to print beside ours (they are measured from Python).
#if canImport(Glibc)
import Glibc
#endif


struct PeerRow { let peer, docListener, queryListener, bulk: String }

/// Candidate locations of the peers' README: $PEERS_README, then the shared checkout.
func peersReadmePath() -> String? {
    var candidates: [String] = []
    if let p = getenvString("PEERS_README") { candidates.append(p) }
    candidates += ["/work/shared/peers/README.md", "../shared/peers/README.md", "../../shared/peers/README.md"]
    return candidates.first { readTextFile($0) != nil }
}

func getenvString(_ name: String) -> String? {
    guard let p = getenv(name) else { return nil }
    return String(cString: p)
}

/// Rows of the table whose header starts with `| peer | (a)`.
func loadPeerRows() -> (path: String, rows: [PeerRow])? {
    guard let path = peersReadmePath(), let text = readTextFile(path) else { return nil }
    var rows: [PeerRow] = []
    var inTable = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let l = line.trimmingSpaces()
        if !inTable {
            if l.hasPrefix("| peer | (a)") { inTable = true }
            continue
        }
        guard l.hasPrefix("|") else { break }
        let cells = l.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard cells.count >= 6, !cells[1].hasPrefix("---") else { continue }
        rows.append(PeerRow(peer: cells[1], docListener: cells[2], queryListener: cells[3], bulk: cells[4]))
    }
    return (path, rows)
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
