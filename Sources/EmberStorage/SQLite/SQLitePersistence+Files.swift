import EmberModel
#if canImport(Glibc)
import Glibc
#endif

/// The file-level facet of `SQLitePersistence`: the exclusive lock file, the header check that
/// turns a foreign, damaged or truncated file into `dataLoss` before SQLite reads it, and
/// deleting the files (clearPersistence).
extension SQLitePersistence {
    /// Files making up the database at `path` (the lock file aside).
    static func files(_ path: String) -> [String] { [path, path + "-wal", path + "-shm"] }

    /// Takes `<path>.lock` with an exclusive, non-blocking `flock`: released by the kernel when
    /// the process dies (kill -9 included), and held per open, so a second open of the same path
    /// in the same process is refused too.
    static func acquireLock(_ path: String) throws -> Int32 {
        if path.isEmpty { throw EmberError.invalidArgument("The database path is empty.") }
        let dir = directory(of: path)
        var st = stat()
        if stat(dir, &st) != 0 || (st.st_mode & S_IFMT) != S_IFDIR {
            throw EmberError(.unavailable, "Cannot open the database '\(path)': the directory '\(dir)' does not exist.")
        }
        let fd = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 {
            let e = errno
            if e == EACCES || e == EROFS || e == EPERM {
                throw EmberError(.permissionDenied, "Cannot open the database '\(path)': the directory '\(dir)' is not writable (\(String(cString: strerror(e)))).")
            }
            throw EmberError(.unavailable, "Cannot open the database '\(path)': \(String(cString: strerror(e))).")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            Glibc.close(fd)
            throw EmberError(.failedPrecondition, "The database '\(path)' is locked: another Ember instance (in this or another process) has it open. Close it first (terminate) or use another path.")
        }
        return fd
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let d = String(path[..<slash])
        return d.isEmpty ? "/" : d
    }

    /// Refuses a file that is not an SQLite database or is shorter than its header says
    /// (truncated), without trusting SQLite to notice (it reads missing pages lazily).
    static func checkHeader(_ path: String) throws {
        let size = fileSize(path)
        if size == 0 { return }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            throw EmberError(e == EACCES ? .permissionDenied : .unavailable, "Cannot read the database '\(path)': \(String(cString: strerror(e))).")
        }
        defer { Glibc.close(fd) }
        var h = [UInt8](repeating: 0, count: 100)
        let n = h.withUnsafeMutableBytes { read(fd, $0.baseAddress, 100) }
        let magic = Array("SQLite format 3".utf8) + [0]
        guard n == 100, Array(h[0..<16]) == magic else {
            throw EmberError(.dataLoss, "The file '\(path)' is not an Ember database or its header is damaged (\(size) bytes). Restore it from a copy, or delete it (clearPersistence) to start empty.")
        }
        func be(_ i: Int, _ k: Int) -> Int64 { (i..<(i + k)).reduce(0) { $0 << 8 | Int64(h[$1]) } }
        var pageSize = be(16, 2)
        if pageSize == 1 { pageSize = 65536 }
        let pages = be(28, 4)
        // The page count is valid when the change counter matches "version valid for"; with a
        // non-empty WAL the main file may legitimately lag (a checkpoint in progress).
        if be(24, 4) == be(92, 4), pages > 0, fileSize(path + "-wal") == 0, size < pageSize * pages {
            throw EmberError(.dataLoss, "The database '\(path)' is truncated: \(size) bytes where its header says \(pageSize * pages). Restore it from a copy, or delete it (clearPersistence) to start empty.")
        }
    }

    /// Deletes the database at `path` (its file, WAL and shared memory). Fails with
    /// `failedPrecondition` while any instance has it open.
    public static func clear(path: String) throws {
        let fd = try acquireLock(path)
        defer { Glibc.close(fd) }
        for f in files(path) where unlink(f) != 0 && errno != ENOENT {
            throw EmberError(.permissionDenied, "Cannot delete '\(f)': \(String(cString: strerror(errno))).")
        }
    }
}

func fileSize(_ path: String) -> Int64 {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : 0
}
