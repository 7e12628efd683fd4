// A small fuzz of RulesParser: the differential rules file with random deletions, insertions and
// swaps of characters must either parse or throw a RulesParseError with a line and column inside
// the source, never trap. Deterministic (a fixed seed), 3000 mutants.
import Foundation
import XCTest
@testable import EmberRules

final class RulesParserFuzzTests: XCTestCase {
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E3779B97F4A7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
            z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
            return z ^ (z >> 31)
        }
    }

    func testMutatedSourcesParseOrFailWithALocation() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/differential.rules")
        let source = Array(try String(contentsOf: url, encoding: .utf8))
        let alphabet = Array("{}()[]/$=*.,;:'\"!&|<>?-+%\\ \nabz09_é")
        var rng = SplitMix(state: 14)
        var failures = 0
        for _ in 0..<3000 {
            var s = source
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let i = Int.random(in: 0..<s.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: s.remove(at: i)
                case 1: s.insert(alphabet.randomElement(using: &rng)!, at: i)
                default: s.swapAt(i, Int.random(in: 0..<s.count, using: &rng))
                }
            }
            let text = String(s)
            do {
                _ = try RulesParser.parse(text)
            } catch let e as RulesParseError {
                failures += 1
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                XCTAssertTrue(e.line >= 1 && e.line <= lines.count, "\(e) in\n\(text)")
                XCTAssertTrue(e.column >= 1 && e.column <= lines[e.line - 1].count + 1, "\(e) in\n\(text)")
            }
        }
        XCTAssertGreaterThan(failures, 1000)
    }
}
