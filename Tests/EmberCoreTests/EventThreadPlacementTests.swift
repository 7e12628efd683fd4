// Tests of the event thread's CPU placement: ember_move_off_cpu (CEmberThreads) and the move a
// `posterStaysBusy` post makes when the event thread last spun on the poster's CPU.
import EmberConcurrency
import XCTest
import Foundation
import CEmberThreads
@testable import EmberCore

final class EventThreadPlacementTests: XCTestCase {

    /// Runs `body` on a new thread (whose affinity the test may change) and waits for it.
    private func onOwnThread(_ body: @escaping @Sendable () -> Void) {
        let done = Semaphore()
        let t = Thread { body(); done.signal() }
        t.start()
        done.wait()
    }

    private static func cpuCount(_ mask: UInt64) -> Int { mask.nonzeroBitCount }

    func testMoveOffACPUMovesTheThreadAndKeepsItsAffinity() {
        let result = Box<[String]>([])
        onOwnThread {
            let original = ember_affinity(0)
            let cpu = ember_current_cpu()
            var notes: [String] = []
            if original == 0 || cpu < 0 || cpu >= 64 { notes.append("no affinity here"); result.value = notes; return }
            if Self.cpuCount(original) < 2 {
                // One CPU allowed: nothing to move to.
                if ember_move_off_cpu(0, cpu) != 0 { notes.append("moved with one CPU allowed") }
            } else {
                if ember_move_off_cpu(0, cpu) != 1 { notes.append("did not move") }
                if ember_current_cpu() == cpu { notes.append("still on CPU \(cpu)") }
                if ember_affinity(0) != original { notes.append("affinity changed") }
            }
            // A CPU outside the mask and the thread's only CPU: no move, the mask unchanged.
            let only = Int32(ember_current_cpu())
            if ember_set_affinity(0, 1 << UInt64(only)) != 0 { notes.append("cannot pin"); result.value = notes; return }
            if ember_move_off_cpu(0, only) != 0 { notes.append("moved off its only CPU") }
            if ember_current_cpu() != only { notes.append("left its only CPU") }
            if ember_move_off_cpu(0, only == 0 ? 1 : 0) != 0 { notes.append("moved off a CPU it may not use") }
            if ember_move_off_cpu(0, -1) != 0 || ember_move_off_cpu(0, 1 << 20) != 0 { notes.append("accepted a bad CPU") }
            if ember_affinity(0) != 1 << UInt64(only) { notes.append("pinned mask changed") }
            _ = ember_set_affinity(0, original)
            result.value = notes
        }
        XCTAssertEqual(result.value, [])
    }

    func testABusyPostersPostFromTheCPUWhereTheThreadSpunMovesIt() throws {
        let original = ember_affinity(0)
        guard Self.cpuCount(original) >= 2 else {
            throw XCTSkip("needs two CPUs (this machine allows \(Self.cpuCount(original)))")
        }
        let events = EventThread(name: "t")
        defer { events.stop() }
        let seen = Box<[String]>([])
        onOwnThread {
            // The poster and the event thread on one CPU, the event thread's mask then restored
            // (it stays where it runs): its next spin records that CPU.
            let cpu = ember_current_cpu()
            _ = ember_set_affinity(0, 1 << UInt64(cpu))
            let eventTid = Box<Int32>(0)
            let pinned = Semaphore()
            events.post {
                eventTid.value = ember_thread_id()
                let mine = ember_affinity(0)
                _ = ember_set_affinity(0, 1 << UInt64(cpu))
                _ = ember_set_affinity(0, mine)
                pinned.signal()
            }
            pinned.wait()
            var notes: [String] = []
            // A plain post (the poster will wait, not work) leaves the thread where it is.
            usleep(2_000)   // it spins on `cpu`, then parks there
            let plain = Semaphore()
            events.post { plain.signal() }
            plain.wait()
            if events.movesOffPosterCPU != 0 { notes.append("a plain post moved the thread") }
            // The plain post ran on `cpu` (the thread's only CPU until it was restored, and
            // where it woke): pin it there again, as above.
            events.post {
                let mine = ember_affinity(0)
                _ = ember_set_affinity(0, 1 << UInt64(cpu))
                _ = ember_set_affinity(0, mine)
                pinned.signal()
            }
            pinned.wait()
            usleep(2_000)
            let ran = Semaphore()
            events.post(posterStaysBusy: true) { ran.signal() }
            ran.wait()
            if events.movesOffPosterCPU != 1 { notes.append("moves after a busy poster's post: \(events.movesOffPosterCPU)") }
            if ember_affinity(eventTid.value) != original { notes.append("the event thread's affinity changed") }
            // A post from a CPU other than the one the thread spins on: no move.
            let spunOn = Box<Int32>(-1)
            let recorded = Semaphore()
            events.post { spunOn.value = ember_current_cpu(); recorded.signal() }
            recorded.wait()
            let other = original & ~(1 << UInt64(spunOn.value))
            if spunOn.value >= 0, other != 0, ember_set_affinity(0, other) == 0 {
                usleep(2_000)
                let n = events.movesOffPosterCPU
                let again = Semaphore()
                events.post(posterStaysBusy: true) { again.signal() }
                again.wait()
                if events.movesOffPosterCPU != n { notes.append("moved for a post from CPU \(ember_current_cpu()), spun on \(spunOn.value)") }
            } else {
                notes.append("could not place the poster")
            }
            _ = ember_set_affinity(0, original)
            seen.value = notes
        }
        XCTAssertEqual(seen.value, [])
    }
}
