// The emulator's process group must be gone on every path out of a test process (issue 10, item 7).
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// Responsible for: checking that `FirestoreEmulator` leaves no process behind.
///
/// Run plainly (as in `swift test`), it starts the emulator, stops it and checks that its whole
/// process group (gcloud -> bash -> java) is gone when `stop()` returns. With
/// `EMBER_EMULATOR_LIFECYCLE=normal|fail|crash` it is the fixture of `Tests/scripts/emulator_hygiene.sh`
/// (`make test-hygiene`): it prints `EMULATOR_PGID=<pgid>` and then ends without stopping the
/// emulator itself, by a normal end, a failed assertion or a crash of the process (SIGKILL); the
/// script then checks from outside that the group is gone.
final class EmulatorLifecycleTests: XCTestCase {
    func testEmulatorProcessGroupIsGoneAfterEveryWayOut() throws {
        if case .failure(let why) = FirestoreEmulator.locate() {
            throw XCTSkip("Cloud Firestore emulator not installed (\(why))")
        }
        let mode = ProcessInfo.processInfo.environment["EMBER_EMULATOR_LIFECYCLE"]
        let emu = try FirestoreEmulator.start(timeout: 90)
        XCTAssertFalse(FirestoreEmulator.liveMembers(ofGroup: emu.pid).isEmpty, "the emulator runs in its own group")
        switch mode {
        case nil:
            emu.stop()
            XCTAssertEqual(FirestoreEmulator.liveMembers(ofGroup: emu.pid), [], "stop() left processes of group \(emu.pid)")
        case "normal":
            // Ends without calling stop(): the instance is kept alive, as a class-level emulator is.
            Self.kept = emu
            print("EMULATOR_PGID=\(emu.pid)")
        case "fail":
            Self.kept = emu
            print("EMULATOR_PGID=\(emu.pid)")
            XCTFail("deliberate failure (EMBER_EMULATOR_LIFECYCLE=fail)")
        case "crash":
            print("EMULATOR_PGID=\(emu.pid)")
            fflush(nil)
            kill(getpid(), SIGKILL)
        default:
            XCTFail("unknown EMBER_EMULATOR_LIFECYCLE=\(mode!)")
        }
    }

    /// The case `start(timeout:)` starts again on another port: an emulator whose port another
    /// socket holds exits, the failure says the port was taken, and nothing of it is left running.
    func testAnEmulatorWhosePortIsTakenFailsSayingSo() throws {
        guard case .success(let gcloud) = FirestoreEmulator.locate() else {
            throw XCTSkip("Cloud Firestore emulator not installed")
        }
        let held = try FirestoreEmulator.boundSocket()
        defer { close(held.fd) }
        do {
            let emu = try FirestoreEmulator.start(gcloud: gcloud, port: held.port, timeout: 90)
            emu.stop()
            XCTFail("the emulator started on port \(held.port), which another socket holds")
        } catch let failure as FirestoreEmulator.Failure {
            XCTAssertTrue(failure.portWasTaken, "\(failure)")
        }
    }

    /// Keeps the fixture's emulator referenced past the test, so that nothing but the process's
    /// own end (and the watchdog) can stop it.
    nonisolated(unsafe) static var kept: FirestoreEmulator?
}
