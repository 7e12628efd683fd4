// ember/firestore/field_value.h: FieldValue, one Firestore value or write sentinel (after
// firebase::firestore::FieldValue), and MapFieldValue, a document's fields. Values cross the C
// ABI as MessagePack, exactly (an Integer stays an integer, a Double a double).
//
//   MapFieldValue city{{"name", FieldValue::String("San Francisco")},
//                      {"population", FieldValue::Integer(860000)},
//                      {"visits", FieldValue::Increment(1)},          // a transform
//                      {"updated", FieldValue::ServerTimestamp()}};
#ifndef EMBER_FIRESTORE_FIELD_VALUE_H
#define EMBER_FIRESTORE_FIELD_VALUE_H

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "internal/msgpack.h"
#include "types.h"

namespace ember {
namespace firestore {

class FieldValue;
class DocumentReference;
/// A document's fields (or a map value): field name -> value.
using MapFieldValue = std::unordered_map<std::string, FieldValue>;

class FieldValue {
 public:
  enum class Type {
    kNull, kBoolean, kInteger, kDouble, kTimestamp, kString, kBlob, kReference, kGeoPoint, kArray, kMap,
    // Sentinels (writes only)
    kDelete, kServerTimestamp, kArrayUnion, kArrayRemove, kIncrementInteger, kIncrementDouble
  };

  /// An invalid value (is_valid() false): what Get() returns for a missing field.
  FieldValue() = default;

  static FieldValue Null() { return FieldValue(Type::kNull); }
  static FieldValue Boolean(bool value) { FieldValue v(Type::kBoolean); v.b_ = value; return v; }
  static FieldValue Integer(int64_t value) { FieldValue v(Type::kInteger); v.i_ = value; return v; }
  static FieldValue Double(double value) { FieldValue v(Type::kDouble); v.d_ = value; return v; }
  static FieldValue Timestamp(ember::firestore::Timestamp value) { FieldValue v(Type::kTimestamp); v.t_ = value; return v; }
  static FieldValue String(std::string value) { FieldValue v(Type::kString); v.s_ = std::move(value); return v; }
  static FieldValue Blob(const uint8_t* bytes, size_t size) {
    FieldValue v(Type::kBlob);
    v.s_.assign(reinterpret_cast<const char*>(bytes), size);
    return v;
  }
  /// A reference to a document (defined with DocumentReference).
  static FieldValue Reference(const DocumentReference& reference);
  static FieldValue GeoPoint(ember::firestore::GeoPoint value) { FieldValue v(Type::kGeoPoint); v.g_ = value; return v; }
  static FieldValue Array(std::vector<FieldValue> values) {
    FieldValue v(Type::kArray);
    v.a_ = std::make_shared<std::vector<FieldValue>>(std::move(values));
    return v;
  }
  static FieldValue Map(MapFieldValue values) {
    FieldValue v(Type::kMap);
    v.m_ = std::make_shared<MapFieldValue>(std::move(values));
    return v;
  }
  /// Removes the field (Update and Set with merge only).
  static FieldValue Delete() { return FieldValue(Type::kDelete); }
  /// The commit time at the backend (reads as null until acknowledged).
  static FieldValue ServerTimestamp() { return FieldValue(Type::kServerTimestamp); }
  static FieldValue ArrayUnion(std::vector<FieldValue> elements) {
    FieldValue v = Array(std::move(elements));
    v.type_ = Type::kArrayUnion;
    return v;
  }
  static FieldValue ArrayRemove(std::vector<FieldValue> elements) {
    FieldValue v = Array(std::move(elements));
    v.type_ = Type::kArrayRemove;
    return v;
  }
  /// Adds `by` to the field (an integer or a double), as firebase's Increment<T>.
  template <typename T>
  static FieldValue Increment(T by) {
    static_assert(std::is_arithmetic<T>::value, "Increment takes an integer or floating point number");
    if (std::is_floating_point<T>::value) {
      FieldValue v(Type::kIncrementDouble);
      v.d_ = static_cast<double>(by);
      return v;
    }
    FieldValue v(Type::kIncrementInteger);
    v.i_ = static_cast<int64_t>(by);
    return v;
  }

  Type type() const { return type_; }
  bool is_valid() const { return valid_; }
  bool is_null() const { return valid_ && type_ == Type::kNull; }
  bool is_boolean() const { return valid_ && type_ == Type::kBoolean; }
  bool is_integer() const { return valid_ && type_ == Type::kInteger; }
  bool is_double() const { return valid_ && type_ == Type::kDouble; }
  bool is_timestamp() const { return valid_ && type_ == Type::kTimestamp; }
  bool is_string() const { return valid_ && type_ == Type::kString; }
  bool is_blob() const { return valid_ && type_ == Type::kBlob; }
  bool is_reference() const { return valid_ && type_ == Type::kReference; }
  bool is_geo_point() const { return valid_ && type_ == Type::kGeoPoint; }
  bool is_array() const { return valid_ && type_ == Type::kArray; }
  bool is_map() const { return valid_ && type_ == Type::kMap; }
  /// A write sentinel (Delete, ServerTimestamp, ArrayUnion, ArrayRemove, Increment).
  bool is_sentinel() const { return valid_ && type_ >= Type::kDelete; }

  // Accessors: the value when of that type, else a default (firebase asserts instead).
  bool boolean_value() const { return is_boolean() && b_; }
  int64_t integer_value() const { return is_integer() || type_ == Type::kIncrementInteger ? i_ : 0; }
  double double_value() const { return is_double() || type_ == Type::kIncrementDouble ? d_ : 0.0; }
  ember::firestore::Timestamp timestamp_value() const { return is_timestamp() ? t_ : ember::firestore::Timestamp(); }
  /// The string; "" when not a string.
  const std::string& string_value() const { return is_string() ? s_ : Empty(); }
  const uint8_t* blob_value() const { return reinterpret_cast<const uint8_t*>(is_blob() ? s_.data() : ""); }
  size_t blob_size() const { return is_blob() ? s_.size() : 0; }
  /// The referenced document (defined with DocumentReference).
  DocumentReference reference_value() const;
  /// The referenced document's path ("cities/SF"): Ember's addition.
  const std::string& reference_path() const { return is_reference() ? s_ : Empty(); }
  ember::firestore::GeoPoint geo_point_value() const { return is_geo_point() ? g_ : ember::firestore::GeoPoint(); }
  std::vector<FieldValue> array_value() const { return a_ ? *a_ : std::vector<FieldValue>(); }
  MapFieldValue map_value() const { return m_ ? *m_ : MapFieldValue(); }

  /// Readable form, as firebase's: strings in single quotes, maps with their keys sorted.
  std::string ToString() const;
  friend std::ostream& operator<<(std::ostream& out, const FieldValue& v) { return out << v.ToString(); }
  friend bool operator==(const FieldValue& a, const FieldValue& b) { return a.Equals(b); }
  friend bool operator!=(const FieldValue& a, const FieldValue& b) { return !a.Equals(b); }

  // ---- Ember's additions: the wire form
  /// Appends this value as MessagePack (sentinels are not values: callers split them out).
  /// Writes the value as MessagePack; a value nested more than MsgpackWriter::kMaxDepth deep
  /// sets w.too_deep (and writes nil there) instead of recursing further.
  void Encode(internal::MsgpackWriter& w, int depth = 0) const;
  /// Decodes one value; an invalid FieldValue when malformed.
  static FieldValue Decode(internal::MsgpackReader& r, const internal::Db& db, int depth = 0);
  static FieldValue FromMsgpack(const char* data, size_t len, const internal::Db& db) {
    internal::MsgpackReader r(data, len);
    FieldValue v = Decode(r, db);
    return r.ok && r.AtEnd() ? v : FieldValue();
  }

 private:
  explicit FieldValue(Type t) : type_(t), valid_(true) {}
  static const std::string& Empty() {
    static const std::string empty;
    return empty;
  }
  bool Equals(const FieldValue& o) const {
    if (valid_ != o.valid_) return false;
    if (!valid_) return true;
    if (type_ != o.type_) return false;
    switch (type_) {
      case Type::kNull: case Type::kDelete: case Type::kServerTimestamp: return true;
      case Type::kBoolean: return b_ == o.b_;
      case Type::kInteger: case Type::kIncrementInteger: return i_ == o.i_;
      case Type::kDouble: case Type::kIncrementDouble:
        return d_ == o.d_ || (std::isnan(d_) && std::isnan(o.d_));
      case Type::kTimestamp: return t_ == o.t_;
      case Type::kString: case Type::kBlob: case Type::kReference: return s_ == o.s_;
      case Type::kGeoPoint: return g_ == o.g_;
      case Type::kArray: case Type::kArrayUnion: case Type::kArrayRemove: return *a_ == *o.a_;
      case Type::kMap: return *m_ == *o.m_;
    }
    return false;
  }

  Type type_ = Type::kNull;
  bool valid_ = false;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  ember::firestore::Timestamp t_;
  ember::firestore::GeoPoint g_;
  std::string s_;                                   // string, blob bytes, reference path
  internal::Db db_;                                 // a reference's database (may be null)
  std::shared_ptr<std::vector<FieldValue>> a_;
  std::shared_ptr<MapFieldValue> m_;
};

inline std::string FieldValue::ToString() const {
  if (!valid_) return "<invalid>";
  switch (type_) {
    case Type::kNull: return "null";
    case Type::kBoolean: return b_ ? "true" : "false";
    case Type::kInteger: return std::to_string(i_);
    case Type::kDouble: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", d_);
      std::string s = buf;
      if (std::isfinite(d_) && s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
    case Type::kTimestamp: return t_.ToString();
    case Type::kString: return "'" + s_ + "'";
    case Type::kBlob: return "Blob(" + std::to_string(s_.size()) + " bytes)";
    case Type::kReference: return "Reference(" + s_ + ")";
    case Type::kGeoPoint: return g_.ToString();
    case Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < a_->size(); i++) out += (i ? ", " : "") + (*a_)[i].ToString();
      return out + "]";
    }
    case Type::kMap: {
      std::vector<std::string> keys;
      for (const auto& kv : *m_) keys.push_back(kv.first);
      std::sort(keys.begin(), keys.end());
      std::string out = "{";
      for (size_t i = 0; i < keys.size(); i++) out += (i ? ", " : "") + keys[i] + ": " + m_->at(keys[i]).ToString();
      return out + "}";
    }
    case Type::kDelete: return "FieldValue::Delete()";
    case Type::kServerTimestamp: return "FieldValue::ServerTimestamp()";
    case Type::kArrayUnion: return "FieldValue::ArrayUnion(" + Array(*a_).ToString() + ")";
    case Type::kArrayRemove: return "FieldValue::ArrayRemove(" + Array(*a_).ToString() + ")";
    case Type::kIncrementInteger: return "FieldValue::Increment(" + std::to_string(i_) + ")";
    case Type::kIncrementDouble: return "FieldValue::Increment(" + Double(d_).ToString() + ")";
  }
  return "?";
}

inline void FieldValue::Encode(internal::MsgpackWriter& w, int depth) const {
  if (!valid_) { w.Nil(); return; }
  if (depth > internal::MsgpackWriter::kMaxDepth) { w.too_deep = true; w.Nil(); return; }
  switch (type_) {
    case Type::kNull: w.Nil(); break;
    case Type::kBoolean: w.Bool(b_); break;
    case Type::kInteger: w.Int(i_); break;
    case Type::kDouble: w.Double(d_); break;
    case Type::kTimestamp: w.Timestamp(t_.seconds(), static_cast<uint32_t>(t_.nanoseconds())); break;
    case Type::kString: w.Str(s_); break;
    case Type::kBlob: w.Bin(s_); break;
    case Type::kReference: w.Ext(1, s_); break;
    case Type::kGeoPoint: w.GeoPoint(g_.latitude(), g_.longitude()); break;
    case Type::kArray:
      w.Array(a_->size());
      for (const auto& v : *a_) v.Encode(w, depth + 1);
      break;
    case Type::kMap:
      w.Map(m_->size());
      for (const auto& kv : *m_) { w.Str(kv.first); kv.second.Encode(w, depth + 1); }
      break;
    default: w.Nil(); break;  // sentinels are split out before encoding
  }
}

inline FieldValue FieldValue::Decode(internal::MsgpackReader& r, const internal::Db& db, int depth) {
  using R = internal::MsgpackReader;
  if (depth > 100) { r.ok = false; return FieldValue(); }
  R::Item it = r.Next();
  switch (it.kind) {
    case R::kNil: return Null();
    case R::kBool: return Boolean(it.b);
    case R::kInt: return Integer(it.i);
    case R::kDouble: return Double(it.d);
    case R::kStr: return String(std::move(it.s));
    case R::kBin: return Blob(reinterpret_cast<const uint8_t*>(it.s.data()), it.s.size());
    case R::kArray: {
      std::vector<FieldValue> values;
      for (uint32_t i = 0; i < it.n && r.ok; i++) values.push_back(Decode(r, db, depth + 1));
      return r.ok ? Array(std::move(values)) : FieldValue();
    }
    case R::kMap: {
      MapFieldValue values;
      for (uint32_t i = 0; i < it.n && r.ok; i++) {
        R::Item key = r.Next();
        if (key.kind != R::kStr) { r.ok = false; break; }
        values[key.s] = Decode(r, db, depth + 1);
      }
      return r.ok ? Map(std::move(values)) : FieldValue();
    }
    case R::kExt:
      if (it.ext == -1) {
        const std::string& s = it.s;
        if (s.size() == 4) return Timestamp({static_cast<int64_t>(R::BigEndian(s, 0, 4)), 0});
        if (s.size() == 8) {
          uint64_t v = R::BigEndian(s, 0, 8);
          return Timestamp({static_cast<int64_t>(v & 0x3ffffffffULL), static_cast<int32_t>(v >> 34)});
        }
        if (s.size() == 12)
          return Timestamp({static_cast<int64_t>(R::BigEndian(s, 4, 8)), static_cast<int32_t>(R::BigEndian(s, 0, 4))});
      } else if (it.ext == 1) {
        FieldValue v(Type::kReference);
        v.s_ = std::move(it.s);
        v.db_ = db;
        return v;
      } else if (it.ext == 2 && it.s.size() == 16) {
        uint64_t a = R::BigEndian(it.s, 0, 8), b = R::BigEndian(it.s, 8, 8);
        double lat, lng;
        std::memcpy(&lat, &a, 8);
        std::memcpy(&lng, &b, 8);
        return GeoPoint({lat, lng});
      }
      r.ok = false;
      return FieldValue();
    default:
      r.ok = false;
      return FieldValue();
  }
}

namespace internal {

/// A field name as one segment of a field path: plain when it is an identifier, else quoted with
/// backquotes (ember.h's field-path notation).
inline std::string QuoteField(const std::string& name) {
  bool plain = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) plain = false;
  if (plain) return name;
  std::string out = "`";
  for (char c : name) {
    if (c == '`' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "`";
}

/// A write's payload for the C ABI: the data map and the transforms map, both MessagePack.
struct WritePayload {
  std::string data;
  std::string transforms;  // empty: none
  std::string error;       // non-empty: the write is invalid (e.g. a sentinel in an array)
};

/// Splits `fields` into data and transforms. `keys_are_paths`: Update's keys are field paths
/// already; `drop_emptied_maps`: merge/update leave out a nested map that held only sentinels.
inline WritePayload SplitWrite(const MapFieldValue& fields, bool keys_are_paths, bool drop_emptied_maps) {
  WritePayload out;
  std::vector<std::pair<std::string, const FieldValue*>> transforms;
  MsgpackWriter data;

  // Returns whether the value holds a sentinel nowhere but in map fields (checked recursively).
  struct Walker {
    std::vector<std::pair<std::string, const FieldValue*>>& transforms;
    std::string& error;
    bool drop;
    int depth = 0;  // maps being written, inside one another
    static bool HasSentinel(const FieldValue& v, int d = 0) {
      if (v.is_sentinel()) return true;
      if (d > MsgpackWriter::kMaxDepth) return false;  // the encoder reports the depth
      if (v.is_array()) for (const auto& e : v.array_value()) if (HasSentinel(e, d + 1)) return true;
      return false;
    }
    // Writes the map's non-sentinel fields; collects sentinels under `prefix`.
    void Map(const MapFieldValue& m, const std::string& prefix, bool top_paths, MsgpackWriter& w) {
      std::vector<std::pair<const std::string*, const FieldValue*>> keep;
      std::vector<std::pair<std::string, std::string>> nested;  // key, encoded map
      for (const auto& kv : m) {
        std::string path = prefix.empty() ? (top_paths ? kv.first : QuoteField(kv.first))
                                          : prefix + "." + QuoteField(kv.first);
        const FieldValue& v = kv.second;
        if (v.is_sentinel()) {
          transforms.emplace_back(path, &v);
        } else if (v.is_map()) {
          if (++depth > MsgpackWriter::kMaxDepth) { --depth; error = "Invalid data. The value is nested too deeply (field " + path + ")"; continue; }
          MapFieldValue inner = v.map_value();
          size_t before = transforms.size();
          MsgpackWriter sub;
          Map(inner, path, false, sub);
          --depth;
          bool emptied = !inner.empty() && sub.bytes.size() == 5 && transforms.size() > before;
          if (!(drop && emptied)) nested.emplace_back(kv.first, sub.bytes);
        } else {
          if (v.is_array()) for (const auto& e : v.array_value())
            if (HasSentinel(e)) error = "Invalid data. FieldValue sentinels are not supported inside arrays (field " + path + ")";
          keep.emplace_back(&kv.first, &v);
        }
      }
      w.Map(keep.size() + nested.size());
      for (const auto& k : keep) { w.Str(*k.first); k.second->Encode(w, depth + 1); }
      if (w.too_deep) error = "Invalid data. The value is nested too deeply";
      for (const auto& n : nested) { w.Str(n.first); w.bytes += n.second; }
    }
  } walker{transforms, out.error, drop_emptied_maps};

  walker.Map(fields, std::string(), keys_are_paths, data);
  out.data = data.bytes;
  if (!transforms.empty()) {
    MsgpackWriter t;
    t.Map(transforms.size());
    for (const auto& tr : transforms) {
      t.Str(tr.first);
      const FieldValue& v = *tr.second;
      switch (v.type()) {
        case FieldValue::Type::kDelete: t.Str("delete"); break;
        case FieldValue::Type::kServerTimestamp: t.Str("serverTimestamp"); break;
        case FieldValue::Type::kIncrementInteger: t.Map(1); t.Str("increment"); t.Int(v.integer_value()); break;
        case FieldValue::Type::kIncrementDouble: t.Map(1); t.Str("increment"); t.Double(v.double_value()); break;
        case FieldValue::Type::kArrayUnion:
        case FieldValue::Type::kArrayRemove: {
          t.Map(1);
          t.Str(v.type() == FieldValue::Type::kArrayUnion ? "arrayUnion" : "arrayRemove");
          FieldValue::Array(v.array_value()).Encode(t);  // array_value() of a sentinel: its elements
          if (t.too_deep) out.error = "Invalid data. The value is nested too deeply (field " + tr.first + ")";
          break;
        }
        default: break;
      }
    }
    out.transforms = t.bytes;
  }
  return out;
}

}  // namespace internal
}  // namespace firestore
}  // namespace ember

#endif
