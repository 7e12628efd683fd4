// ember/firestore/internal/msgpack.h: the MessagePack writer and reader the wrapper uses to
// carry values across the C ABI exactly (EMBER_FORMAT_MSGPACK; see ember.h for the extension
// types: -1 timestamp, 1 reference, 2 geopoint).
#ifndef EMBER_FIRESTORE_INTERNAL_MSGPACK_H
#define EMBER_FIRESTORE_INTERNAL_MSGPACK_H

#include <cstdint>
#include <cstring>
#include <string>

namespace ember {
namespace firestore {
namespace internal {

/// Appends MessagePack items to a byte string (always the widest forms: simple and exact).
class MsgpackWriter {
 public:
  std::string bytes;
  /// Set by an encoder that met a value nested deeper than it writes (kMaxDepth).
  bool too_deep = false;
  static constexpr int kMaxDepth = 64;
  void Nil() { bytes.push_back(static_cast<char>(0xc0)); }
  void Bool(bool b) { bytes.push_back(static_cast<char>(b ? 0xc3 : 0xc2)); }
  void Int(int64_t v) { Byte(0xd3); Be(static_cast<uint64_t>(v), 8); }
  void Double(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    Byte(0xcb);
    Be(bits, 8);
  }
  void Str(const std::string& s) { Byte(0xdb); Be(s.size(), 4); bytes += s; }
  void Bin(const std::string& s) { Byte(0xc6); Be(s.size(), 4); bytes += s; }
  void Array(size_t n) { Byte(0xdd); Be(n, 4); }
  void Map(size_t n) { Byte(0xdf); Be(n, 4); }
  void Ext(int8_t type, const std::string& data) {
    Byte(0xc9);
    Be(data.size(), 4);
    Byte(static_cast<uint8_t>(type));
    bytes += data;
  }
  void Timestamp(int64_t seconds, uint32_t nanos) {
    MsgpackWriter w;
    w.Be(nanos, 4);
    w.Be(static_cast<uint64_t>(seconds), 8);
    Ext(-1, w.bytes);
  }
  void GeoPoint(double lat, double lng) {
    MsgpackWriter w;
    uint64_t a, b;
    std::memcpy(&a, &lat, 8);
    std::memcpy(&b, &lng, 8);
    w.Be(a, 8);
    w.Be(b, 8);
    Ext(2, w.bytes);
  }
  void Byte(uint8_t b) { bytes.push_back(static_cast<char>(b)); }
  void Be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; i--) Byte(static_cast<uint8_t>(v >> (8 * i)));
  }
};

/// Reads MessagePack items from a buffer; `ok` turns false on malformed input (never throws).
class MsgpackReader {
 public:
  enum Kind { kNil, kBool, kInt, kDouble, kStr, kBin, kArray, kMap, kExt, kBad };
  struct Item {
    Kind kind = kBad;
    bool b = false;
    int64_t i = 0;
    double d = 0;
    std::string s;     // str, bin, ext data
    uint32_t n = 0;    // array / map length
    int8_t ext = 0;
  };
  MsgpackReader(const char* data, size_t len) : p_(reinterpret_cast<const uint8_t*>(data)), end_(p_ + len) {}
  bool ok = true;
  bool AtEnd() const { return p_ == end_; }

  Item Next() {
    Item it;
    uint8_t c;
    if (!Take(c)) return it;
    if (c <= 0x7f) { it.kind = kInt; it.i = c; }
    else if (c >= 0xe0) { it.kind = kInt; it.i = static_cast<int8_t>(c); }
    else if (c >= 0x80 && c <= 0x8f) { it.kind = kMap; it.n = c & 0x0f; }
    else if (c >= 0x90 && c <= 0x9f) { it.kind = kArray; it.n = c & 0x0f; }
    else if (c >= 0xa0 && c <= 0xbf) { it.kind = kStr; Bytes(c & 0x1f, it.s); }
    else switch (c) {
      case 0xc0: it.kind = kNil; break;
      case 0xc2: it.kind = kBool; it.b = false; break;
      case 0xc3: it.kind = kBool; it.b = true; break;
      case 0xc4: case 0xc5: case 0xc6: it.kind = kBin; Bytes(Uint(1 << (c - 0xc4)), it.s); break;
      case 0xc7: case 0xc8: case 0xc9: {
        uint64_t n = Uint(1 << (c - 0xc7));
        it.kind = kExt; it.ext = static_cast<int8_t>(Uint(1)); Bytes(n, it.s); break;
      }
      case 0xca: { uint32_t bits = static_cast<uint32_t>(Uint(4)); float f; std::memcpy(&f, &bits, 4); it.kind = kDouble; it.d = f; break; }
      case 0xcb: { uint64_t bits = Uint(8); std::memcpy(&it.d, &bits, 8); it.kind = kDouble; break; }
      case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        uint64_t v = Uint(1 << (c - 0xcc));
        if (v > static_cast<uint64_t>(INT64_MAX)) ok = false;
        it.kind = kInt; it.i = static_cast<int64_t>(v); break;
      }
      case 0xd0: it.kind = kInt; it.i = static_cast<int8_t>(Uint(1)); break;
      case 0xd1: it.kind = kInt; it.i = static_cast<int16_t>(Uint(2)); break;
      case 0xd2: it.kind = kInt; it.i = static_cast<int32_t>(Uint(4)); break;
      case 0xd3: it.kind = kInt; it.i = static_cast<int64_t>(Uint(8)); break;
      case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        it.kind = kExt; it.ext = static_cast<int8_t>(Uint(1)); Bytes(size_t(1) << (c - 0xd4), it.s); break;
      case 0xd9: case 0xda: case 0xdb: it.kind = kStr; Bytes(Uint(1 << (c - 0xd9)), it.s); break;
      case 0xdc: case 0xdd: it.kind = kArray; it.n = static_cast<uint32_t>(Uint(c == 0xdc ? 2 : 4)); break;
      case 0xde: case 0xdf: it.kind = kMap; it.n = static_cast<uint32_t>(Uint(c == 0xde ? 2 : 4)); break;
      default: ok = false; break;
    }
    if (!ok) it.kind = kBad;
    return it;
  }

  static uint64_t BigEndian(const std::string& s, size_t at, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
    return v;
  }

 private:
  bool Take(uint8_t& c) {
    if (p_ >= end_) { ok = false; return false; }
    c = *p_++;
    return true;
  }
  uint64_t Uint(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) {
      uint8_t c;
      if (!Take(c)) return 0;
      v = (v << 8) | c;
    }
    return v;
  }
  void Bytes(uint64_t n, std::string& out) {
    if (!ok || n > static_cast<uint64_t>(end_ - p_)) { ok = false; return; }
    out.assign(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace internal
}  // namespace firestore
}  // namespace ember

#endif
