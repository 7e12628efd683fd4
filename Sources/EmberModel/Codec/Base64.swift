/// Responsible for: standard base64 (RFC 4648, with padding) without Foundation.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let reverse: [Int16] = {
        var r = [Int16](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { r[Int(c)] = Int16(i) }
        return r
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for s in [18, 12, 6, 0] { out.append(alphabet[Int((n >> UInt32(s)) & 63)]) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            var n = UInt32(bytes[i]) << 16
            if rest == 2 { n |= UInt32(bytes[i + 1]) << 8 }
            out.append(alphabet[Int((n >> 18) & 63)])
            out.append(alphabet[Int((n >> 12) & 63)])
            out.append(rest == 2 ? alphabet[Int((n >> 6) & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil when `s` is not canonical padded base64.
    public static func decode(_ s: String) -> [UInt8]? {
        let u = Array(s.utf8)
        if u.count % 4 != 0 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 4 * 3)
        var i = 0
        while i < u.count {
            var n: UInt32 = 0
            var pad = 0
            for j in 0..<4 {
                let c = u[i + j]
                if c == UInt8(ascii: "=") {
                    if i + 4 != u.count || j < 2 { return nil }
                    pad += 1
                    n <<= 6
                } else {
                    if pad > 0 { return nil }
                    let v = reverse[Int(c)]
                    if v < 0 { return nil }
                    n = n << 6 | UInt32(v)
                }
            }
            out.append(UInt8((n >> 16) & 0xFF))
            if pad < 2 { out.append(UInt8((n >> 8) & 0xFF)) }
            if pad < 1 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}

/// Responsible for: RFC 3339 timestamps in UTC with up to microsecond precision, without Foundation.
public enum RFC3339 {
    /// "2024-05-01T12:00:00.000001Z" (always six fraction digits).
    public static func format(_ t: Timestamp) -> String {
        let secs = t.seconds
        let micros = Int((t.micros - secs * 1_000_000))
        var days = Int(secs >= 0 ? secs / 86_400 : (secs - 86_399) / 86_400)
        let sod = Int(secs - Int64(days) * 86_400)
        // Civil-from-days (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        var y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        if m <= 2 { y += 1 }
        func pad(_ v: Int, _ n: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, n - s.count)) + s }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(sod / 3600, 2)):\(pad(sod / 60 % 60, 2)):\(pad(sod % 60, 2)).\(pad(micros, 6))Z"
    }

    /// Parses "YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM)"; more than 6 fraction digits must be zeros.
    public static func parse(_ s: String) -> Timestamp? {
        let u = Array(s.utf8)
        func num(_ a: Int, _ n: Int) -> Int? {
            guard a + n <= u.count else { return nil }
            var v = 0
            for k in a..<(a + n) { guard (0x30...0x39).contains(u[k]) else { return nil }; v = v * 10 + Int(u[k] - 0x30) }
            return v
        }
        guard u.count >= 20, let y = num(0, 4), u[4] == 0x2D, let mo = num(5, 2), u[7] == 0x2D, let d = num(8, 2),
              u[10] == UInt8(ascii: "T") || u[10] == UInt8(ascii: "t"), let h = num(11, 2), u[13] == 0x3A,
              let mi = num(14, 2), u[16] == 0x3A, let se = num(17, 2) else { return nil }
        guard (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, se < 60 else { return nil }
        var i = 19
        var micros = 0
        if i < u.count, u[i] == 0x2E {
            i += 1
            var digits = 0
            while i < u.count, (0x30...0x39).contains(u[i]) {
                if digits < 6 { micros = micros * 10 + Int(u[i] - 0x30) } else if u[i] != 0x30 { return nil }
                digits += 1
                i += 1
            }
            if digits == 0 { return nil }
            // (digits..<6 would trap for more than 6 digits: found by bindings/c/fuzz/fuzz_values)
            if digits < 6 { for _ in digits..<6 { micros *= 10 } }
        }
        var offset = 0
        guard i < u.count else { return nil }
        if u[i] == UInt8(ascii: "Z") || u[i] == UInt8(ascii: "z") { i += 1 } else {
            guard u[i] == 0x2B || u[i] == 0x2D, let oh = num(i + 1, 2), u.count > i + 3, u[i + 3] == 0x3A, let om = num(i + 4, 2) else { return nil }
            offset = (oh * 60 + om) * 60 * (u[i] == 0x2B ? 1 : -1)
            i += 6
        }
        guard i == u.count else { return nil }
        // Days-from-civil.
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let mp = mo > 2 ? mo - 3 : mo + 9
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let secs = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + se - offset)
        let t = Timestamp(micros: secs * 1_000_000 + Int64(micros))
        guard t.micros >= Timestamp.minMicros, t.micros <= Timestamp.maxMicros else { return nil }
        return t
    }
}
