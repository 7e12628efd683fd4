import CSQLite
import EmberModel

/// Responsible for: `ember_admits(present, data, filter)`, the SQL function a collection scan runs
/// in its WHERE clause, so that SQLite reads a row's other columns only when its stored fields
/// pass the query's AND filters (`RawPrefilter`); it also counts the rows it saw. The filter is
/// bound with `sqlite3_bind_pointer` under the type "ember_row_filter": a value from SQL text can
/// never reach it as one. Registered on every connection `SQLiteDatabase` opens.
final class SQLiteRowFilter {
    static let pointerType: StaticString = "ember_row_filter"
    let prefilter: RawPrefilter
    /// The same filters decided from the bytes without a `Value` or a retain, when it can.
    private let matcher: RawFieldMatcher?
    /// Rows the function was called for (every row of the scanned range).
    private(set) var rowsSeen = 0

    init(_ prefilter: RawPrefilter) {
        self.prefilter = prefilter
        matcher = RawFieldMatcher(prefilter.checks.map { $0.filter })
    }

    deinit { matcher?.deallocate() }

    /// Whether a row's stored fields pass the filters.
    @inline(__always)
    func admits(_ fields: UnsafeBufferPointer<UInt8>) -> Bool {
        if let m = matcher, let decided = m.decide(fields) { return decided }
        return prefilter.admits(fields)
    }

    static func register(on db: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(db, "ember_admits", 3, SQLITE_UTF8, nil, { ctx, argc, argv in
            guard argc == 3, let argv,
                  let p = SQLiteRowFilter.pointerType.withUTF8Buffer({ t in
                      sqlite3_value_pointer(argv[2], UnsafeRawPointer(t.baseAddress!).assumingMemoryBound(to: CChar.self))
                  }) else {
                sqlite3_result_int(ctx, 1)   // no filter bound: every row passes (the query checks)
                return
            }
            // Borrowed, not retained: the statement's binding keeps the filter alive.
            Unmanaged<SQLiteRowFilter>.fromOpaque(p)._withUnsafeGuaranteedRef { filter in
                filter.rowsSeen += 1
                guard sqlite3_value_int64(argv[0]) != 0 else { return sqlite3_result_int(ctx, 0) }
                let n = Int(sqlite3_value_bytes(argv[1]))
                let bytes = sqlite3_value_blob(argv[1])
                let fields = UnsafeBufferPointer(start: bytes?.assumingMemoryBound(to: UInt8.self), count: bytes == nil ? 0 : n)
                sqlite3_result_int(ctx, filter.admits(fields) ? 1 : 0)
            }
        }, nil, nil, nil)
    }
}

extension SQLiteStatement {
    /// Binds `filter` for `ember_admits`; it must stay alive until the statement is reset.
    func bind(_ i: Int32, rowFilter filter: SQLiteRowFilter) {
        _ = SQLiteRowFilter.pointerType.withUTF8Buffer { t in
            sqlite3_bind_pointer(p, i, Unmanaged.passUnretained(filter).toOpaque(),
                                 UnsafeRawPointer(t.baseAddress!).assumingMemoryBound(to: CChar.self), nil)
        }
    }
}
