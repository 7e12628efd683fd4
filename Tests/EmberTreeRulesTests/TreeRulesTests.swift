import EmberModel
import Testing
@testable import EmberTreeRules

/// The rules tables (RulesTables), one test per case, and the tables' size.
@Suite struct TreeRulesTableTests {
    @Test(arguments: RulesTables.all)
    func decides(_ c: RulesCase) throws {
        #expect(try c.decide() == c.allowed, "\(c.name)")
    }

    @Test func tablesHaveAtLeast150Cases() {
        #expect(RulesTables.all.count >= 150)
        #expect(RulesTables.all.filter(\.allowed).count >= 50)
        #expect(RulesTables.all.filter { !$0.allowed }.count >= 50)
    }
}
