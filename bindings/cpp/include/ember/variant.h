// ember/variant.h: ember::Variant, the dynamically typed value of the tree API (after
// firebase-cpp-sdk's firebase::Variant): null, bool, int64, double, string, vector, map.
// It crosses the C ABI as MessagePack (EMBER_FORMAT_MSGPACK), exactly: an int stays an int64,
// a double a double. Blobs (firebase's kTypeStaticBlob / kTypeMutableBlob) are not supported:
// the tree has no bytes.
//
//   ember::Variant post = std::map<std::string, ember::Variant>{{"title", "Hi"}, {"stars", 3}};
//   post.map()[ember::Variant("tags")] = std::vector<ember::Variant>{"a", "b"};
//   std::cout << post << std::endl;          // {"stars":3,"tags":["a","b"],"title":"Hi"}
#ifndef EMBER_VARIANT_H
#define EMBER_VARIANT_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "firestore/internal/msgpack.h"

namespace ember {

/// A value of one of the types below. Copies are deep. Strings are always stored (a "static"
/// string is copied too; is_static_string() only remembers how it was made).
class Variant {
 public:
  enum Type {
    kTypeNull,
    kTypeInt64,
    kTypeDouble,
    kTypeBool,
    kTypeStaticString,
    kTypeMutableString,
    kTypeVector,
    kTypeMap,
  };

  Variant() = default;
  Variant(bool value) : type_(kTypeBool), b_(value) {}
  Variant(int value) : type_(kTypeInt64), i_(value) {}
  Variant(unsigned int value) : type_(kTypeInt64), i_(value) {}
  Variant(long value) : type_(kTypeInt64), i_(value) {}
  Variant(unsigned long value) : type_(kTypeInt64), i_(static_cast<int64_t>(value)) {}
  Variant(long long value) : type_(kTypeInt64), i_(value) {}
  Variant(unsigned long long value) : type_(kTypeInt64), i_(static_cast<int64_t>(value)) {}
  Variant(float value) : type_(kTypeDouble), d_(value) {}
  Variant(double value) : type_(kTypeDouble), d_(value) {}
  Variant(const char* value) : type_(value ? kTypeMutableString : kTypeNull), s_(value ? value : "") {}
  Variant(const std::string& value) : type_(kTypeMutableString), s_(value) {}
  Variant(std::string&& value) : type_(kTypeMutableString), s_(std::move(value)) {}
  template <typename T>
  Variant(const std::vector<T>& values) : type_(kTypeVector), v_(new std::vector<Variant>()) {
    v_->reserve(values.size());
    for (const T& x : values) v_->push_back(Variant(x));
  }
  template <typename K, typename V>
  Variant(const std::map<K, V>& values) : type_(kTypeMap), m_(new std::map<Variant, Variant>()) {
    for (const auto& kv : values) (*m_)[Variant(kv.first)] = Variant(kv.second);
  }

  Variant(const Variant& o) { *this = o; }
  Variant(Variant&& o) noexcept { *this = std::move(o); }
  Variant& operator=(const Variant& o) {
    if (this == &o) return *this;
    type_ = o.type_; i_ = o.i_; d_ = o.d_; b_ = o.b_; s_ = o.s_;
    v_.reset(o.v_ ? new std::vector<Variant>(*o.v_) : nullptr);
    m_.reset(o.m_ ? new std::map<Variant, Variant>(*o.m_) : nullptr);
    return *this;
  }
  Variant& operator=(Variant&& o) noexcept {
    if (this == &o) return *this;
    type_ = o.type_; i_ = o.i_; d_ = o.d_; b_ = o.b_; s_ = std::move(o.s_);
    v_ = std::move(o.v_);
    m_ = std::move(o.m_);
    o.type_ = kTypeNull;
    return *this;
  }
  ~Variant() = default;

  static Variant Null() { return Variant(); }
  static Variant EmptyVector() { return Variant(std::vector<Variant>()); }
  static Variant EmptyMap() { return Variant(std::map<Variant, Variant>()); }
  static Variant FromInt64(int64_t value) { return Variant(static_cast<long long>(value)); }
  static Variant FromDouble(double value) { return Variant(value); }
  static Variant FromBool(bool value) { return Variant(value); }
  static Variant FromStaticString(const char* value) {
    Variant v(value);
    if (value) v.type_ = kTypeStaticString;
    return v;
  }
  static Variant FromMutableString(const std::string& value) { return Variant(value); }

  Type type() const { return type_; }
  bool is_null() const { return type_ == kTypeNull; }
  bool is_int64() const { return type_ == kTypeInt64; }
  bool is_double() const { return type_ == kTypeDouble; }
  bool is_bool() const { return type_ == kTypeBool; }
  bool is_string() const { return type_ == kTypeStaticString || type_ == kTypeMutableString; }
  bool is_static_string() const { return type_ == kTypeStaticString; }
  bool is_mutable_string() const { return type_ == kTypeMutableString; }
  bool is_vector() const { return type_ == kTypeVector; }
  bool is_map() const { return type_ == kTypeMap; }
  bool is_numeric() const { return is_int64() || is_double(); }
  bool is_container_type() const { return is_vector() || is_map(); }
  bool is_fundamental_type() const { return !is_container_type(); }

  /// The value when the type matches; 0, 0.0, false, "", empty containers otherwise.
  int64_t int64_value() const { return is_int64() ? i_ : 0; }
  double double_value() const { return is_double() ? d_ : 0.0; }
  bool bool_value() const { return is_bool() && b_; }
  const char* string_value() const { return is_string() ? s_.c_str() : ""; }
  const std::vector<Variant>& vector() const { return is_vector() ? *v_ : EmptyVectorRef(); }
  const std::map<Variant, Variant>& map() const { return is_map() ? *m_ : EmptyMapRef(); }
  /// Mutable access; turns the variant into that type (empty) first when it is another type.
  std::string& mutable_string() {
    if (!is_string()) *this = Variant(std::string());
    type_ = kTypeMutableString;
    return s_;
  }
  std::vector<Variant>& vector() {
    if (!is_vector()) *this = EmptyVector();
    return *v_;
  }
  std::map<Variant, Variant>& map() {
    if (!is_map()) *this = EmptyMap();
    return *m_;
  }

  void set_null() { *this = Variant(); }
  void set_int64_value(int64_t value) { *this = FromInt64(value); }
  void set_double_value(double value) { *this = Variant(value); }
  void set_bool_value(bool value) { *this = Variant(value); }
  void set_string_value(const char* value) { *this = Variant(value); }
  void set_string_value(const std::string& value) { *this = Variant(value); }
  void set_mutable_string(const std::string& value) { *this = Variant(value); }
  void set_vector(const std::vector<Variant>& value) { *this = Variant(value); }
  void set_map(const std::map<Variant, Variant>& value) { *this = Variant(value); }

  /// Conversions (firebase's As*): numbers and bools to and from strings; containers give null.
  Variant AsString() const {
    switch (type_) {
      case kTypeInt64: return Variant(std::to_string(i_));
      case kTypeDouble: return Variant(DoubleString(d_));
      case kTypeBool: return Variant(b_ ? "true" : "false");
      case kTypeStaticString: case kTypeMutableString: return *this;
      default: return Variant(std::string());
    }
  }
  Variant AsInt64() const {
    switch (type_) {
      case kTypeInt64: return *this;
      case kTypeDouble: return FromInt64(static_cast<int64_t>(d_));
      case kTypeBool: return FromInt64(b_ ? 1 : 0);
      case kTypeStaticString: case kTypeMutableString: return FromInt64(std::strtoll(s_.c_str(), nullptr, 10));
      default: return FromInt64(0);
    }
  }
  Variant AsDouble() const {
    switch (type_) {
      case kTypeInt64: return Variant(static_cast<double>(i_));
      case kTypeDouble: return *this;
      case kTypeBool: return Variant(b_ ? 1.0 : 0.0);
      case kTypeStaticString: case kTypeMutableString: return Variant(std::strtod(s_.c_str(), nullptr));
      default: return Variant(0.0);
    }
  }
  Variant AsBool() const {
    switch (type_) {
      case kTypeNull: return Variant(false);
      case kTypeInt64: return Variant(i_ != 0);
      case kTypeDouble: return Variant(d_ != 0);
      case kTypeBool: return *this;
      case kTypeStaticString: case kTypeMutableString: return Variant(!s_.empty() && s_ != "false" && s_ != "0");
      case kTypeVector: return Variant(!v_->empty());
      case kTypeMap: return Variant(!m_->empty());
    }
    return Variant(false);
  }

  static const char* TypeName(Type type) {
    static const char* const names[] = {"Null", "Int64", "Double", "Bool", "StaticString", "MutableString",
                                        "Vector", "Map"};
    return type >= kTypeNull && type <= kTypeMap ? names[type] : "Unknown";
  }

  /// Equal type (both string kinds count as one) and equal value; int 1 != double 1.0.
  friend bool operator==(const Variant& a, const Variant& b) {
    if (a.is_string() && b.is_string()) return a.s_ == b.s_;
    if (a.type_ != b.type_) return false;
    switch (a.type_) {
      case kTypeNull: return true;
      case kTypeInt64: return a.i_ == b.i_;
      case kTypeDouble: return a.d_ == b.d_ || (std::isnan(a.d_) && std::isnan(b.d_));
      case kTypeBool: return a.b_ == b.b_;
      case kTypeVector: return *a.v_ == *b.v_;
      case kTypeMap: return *a.m_ == *b.m_;
      default: return false;
    }
  }
  friend bool operator!=(const Variant& a, const Variant& b) { return !(a == b); }
  /// A total order for map keys: by type, then by value (strings by bytes).
  friend bool operator<(const Variant& a, const Variant& b) {
    if (a.is_string() && b.is_string()) return a.s_ < b.s_;
    int ta = a.is_string() ? kTypeMutableString : a.type_, tb = b.is_string() ? kTypeMutableString : b.type_;
    if (ta != tb) return ta < tb;
    switch (a.type_) {
      case kTypeInt64: return a.i_ < b.i_;
      case kTypeDouble: return a.d_ < b.d_;
      case kTypeBool: return !a.b_ && b.b_;
      case kTypeVector: return *a.v_ < *b.v_;
      case kTypeMap: return *a.m_ < *b.m_;
      default: return false;
    }
  }
  friend bool operator>(const Variant& a, const Variant& b) { return b < a; }
  friend bool operator<=(const Variant& a, const Variant& b) { return !(b < a); }
  friend bool operator>=(const Variant& a, const Variant& b) { return !(a < b); }

  /// Ember's addition: JSON text (doubles keep a ".0" or exponent, so 1 and 1.0 differ; maps in
  /// key order). NaN and infinities print as NaN, Infinity, -Infinity.
  std::string ToString() const {
    std::string out;
    Append(out);
    return out;
  }
  friend std::ostream& operator<<(std::ostream& out, const Variant& v) { return out << v.ToString(); }

 private:
  static const std::vector<Variant>& EmptyVectorRef() {
    static const std::vector<Variant> empty;
    return empty;
  }
  static const std::map<Variant, Variant>& EmptyMapRef() {
    static const std::map<Variant, Variant> empty;
    return empty;
  }
  static std::string DoubleString(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    char buf[40];
    for (int precision = 1; precision <= 17; precision++) {
      std::snprintf(buf, sizeof buf, "%.*g", precision, d);
      if (std::strtod(buf, nullptr) == d) break;
    }
    std::string s(buf);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  static void Quote(std::string& out, const std::string& s) {
    out += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
      else if (c == '\n') out += "\\n";
      else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
      else out += static_cast<char>(c);
    }
    out += '"';
  }
  void Append(std::string& out) const {
    switch (type_) {
      case kTypeNull: out += "null"; break;
      case kTypeInt64: out += std::to_string(i_); break;
      case kTypeDouble: out += DoubleString(d_); break;
      case kTypeBool: out += b_ ? "true" : "false"; break;
      case kTypeStaticString: case kTypeMutableString: Quote(out, s_); break;
      case kTypeVector: {
        out += '[';
        bool first = true;
        for (const Variant& x : *v_) { if (!first) out += ','; first = false; x.Append(out); }
        out += ']';
        break;
      }
      case kTypeMap: {
        out += '{';
        bool first = true;
        for (const auto& kv : *m_) {
          if (!first) out += ',';
          first = false;
          Quote(out, kv.first.AsString().s_);
          out += ':';
          kv.second.Append(out);
        }
        out += '}';
        break;
      }
    }
  }

  Type type_ = kTypeNull;
  int64_t i_ = 0;
  double d_ = 0;
  bool b_ = false;
  std::string s_;
  std::unique_ptr<std::vector<Variant>> v_;
  std::unique_ptr<std::map<Variant, Variant>> m_;
};

namespace internal {

/// Encodes a Variant as one MessagePack value. Map keys become strings (ints and bools by their
/// text, as firebase-cpp does); other keys (doubles, containers, null) fail with a message.
inline bool EncodeVariant(const Variant& v, firestore::internal::MsgpackWriter& w, std::string& error, int depth = 0) {
  if (depth > 64) { error = "value nested too deeply"; return false; }
  switch (v.type()) {
    case Variant::kTypeNull: w.Nil(); return true;
    case Variant::kTypeInt64: w.Int(v.int64_value()); return true;
    case Variant::kTypeDouble: w.Double(v.double_value()); return true;
    case Variant::kTypeBool: w.Bool(v.bool_value()); return true;
    case Variant::kTypeStaticString: case Variant::kTypeMutableString: w.Str(v.string_value()); return true;
    case Variant::kTypeVector:
      w.Array(v.vector().size());
      for (const Variant& x : v.vector())
        if (!EncodeVariant(x, w, error, depth + 1)) return false;
      return true;
    case Variant::kTypeMap:
      w.Map(v.map().size());
      for (const auto& kv : v.map()) {
        if (!kv.first.is_string() && !kv.first.is_int64() && !kv.first.is_bool()) {
          error = std::string("map key of type ") + Variant::TypeName(kv.first.type()) + " (keys are strings)";
          return false;
        }
        w.Str(kv.first.AsString().string_value());
        if (!EncodeVariant(kv.second, w, error, depth + 1)) return false;
      }
      return true;
  }
  error = "unknown Variant type";
  return false;
}

/// Decodes one MessagePack value (the tree's: nil, bool, int, double, str, array, map).
inline Variant DecodeVariant(firestore::internal::MsgpackReader& r, int depth = 0) {
  using R = firestore::internal::MsgpackReader;
  if (depth > 64) { r.ok = false; return Variant(); }
  R::Item it = r.Next();
  switch (it.kind) {
    case R::kNil: return Variant();
    case R::kBool: return Variant(it.b);
    case R::kInt: return Variant::FromInt64(it.i);
    case R::kDouble: return Variant(it.d);
    case R::kStr: return Variant(std::move(it.s));
    case R::kArray: {
      Variant v = Variant::EmptyVector();
      for (uint32_t i = 0; i < it.n && r.ok; i++) v.vector().push_back(DecodeVariant(r, depth + 1));
      return v;
    }
    case R::kMap: {
      Variant v = Variant::EmptyMap();
      for (uint32_t i = 0; i < it.n && r.ok; i++) {
        Variant key = DecodeVariant(r, depth + 1);
        Variant value = DecodeVariant(r, depth + 1);
        v.map()[key] = std::move(value);
      }
      return v;
    }
    default: r.ok = false; return Variant();
  }
}

inline Variant VariantFromMsgpack(const char* data, size_t len) {
  firestore::internal::MsgpackReader r(data, len);
  Variant v = DecodeVariant(r);
  return r.ok && r.AtEnd() ? v : Variant();
}

}  // namespace internal
}  // namespace ember

#endif
