// ember/database/mutable_data.h: MutableData and TransactionResult (after firebase-cpp's
// firebase/database/mutable_data.h and transaction.h): the data a transaction function reads and
// changes. A MutableData and every Child() made from it share one value: setting a child's value
// changes its parents'.
//
//   ref.RunTransaction([](MutableData* data) {
//     data->set_value(data->value().is_int64() ? data->value().int64_value() + 1 : 1);
//     return kTransactionResultSuccess;
//   });
#ifndef EMBER_DATABASE_MUTABLE_DATA_H
#define EMBER_DATABASE_MUTABLE_DATA_H

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

namespace ember {
namespace database {

/// What a transaction function returns: write the data it was given (changed or not), or abort
/// (the RunTransaction future fails with kErrorTransactionAbortedByUser).
enum TransactionResult {
  kTransactionResultSuccess,
  kTransactionResultAbort,
};

class MutableData {
 public:
  MutableData(MutableData&&) = default;
  MutableData& operator=(MutableData&&) = default;
  MutableData(const MutableData&) = delete;
  MutableData& operator=(const MutableData&) = delete;

  /// The value here: null, bool, int64, double, string, vector (dense integer keys) or map.
  Variant value() const {
    const Variant* v = Find();
    return v ? *v : Variant();
  }
  /// Replaces the value here (null removes it).
  void set_value(const Variant& value) { Slot() = value; }
  /// Ember has no priorities: always null.
  Variant priority() const { return Variant(); }
  /// The last segment of the location (nullptr at the root). Valid while the data lives.
  const char* key() const { return path_.empty() ? (key_.empty() ? nullptr : key_.c_str()) : path_.back().c_str(); }
  std::string key_string() const {
    const char* k = key();
    return k ? k : "";
  }
  /// The data at `path` ("a/b") below this one; setting its value changes this one.
  MutableData Child(const std::string& path) const {
    std::vector<std::string> p = path_;
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find('/', start);
      if (end == std::string::npos) end = path.size();
      if (end > start) p.push_back(path.substr(start, end - start));
      start = end + 1;
    }
    return MutableData(root_, std::move(p), key_);
  }
  MutableData Child(const char* path) const { return Child(std::string(path ? path : "")); }
  bool HasChild(const std::string& path) const { return !Child(path).value().is_null(); }
  size_t children_count() const {
    Variant v = value();
    return v.is_map() ? v.map().size() : v.is_vector() ? v.vector().size() : 0;
  }
  /// The direct children, in key order (positions for a vector).
  std::vector<MutableData> children() {
    std::vector<MutableData> out;
    Variant v = value();
    if (v.is_map()) {
      for (const auto& kv : v.map()) out.push_back(Child(kv.first.AsString().string_value()));
    } else if (v.is_vector()) {
      for (size_t i = 0; i < v.vector().size(); i++) out.push_back(Child(std::to_string(i)));
    }
    return out;
  }

  /// Ember's: the data the transaction starts from (`key`: its location's last segment).
  MutableData(Variant value, std::string key)
      : root_(std::make_shared<Variant>(std::move(value))), key_(std::move(key)) {}
  /// Ember's: the whole value this data belongs to.
  const Variant& root_value() const { return *root_; }

 private:
  MutableData(std::shared_ptr<Variant> root, std::vector<std::string> path, std::string key)
      : root_(std::move(root)), path_(std::move(path)), key_(std::move(key)) {}

  static const Variant* ChildOf(const Variant& v, const std::string& k) {
    if (v.is_map()) {
      auto it = v.map().find(Variant(k));
      return it == v.map().end() ? nullptr : &it->second;
    }
    if (v.is_vector()) {
      char* end = nullptr;
      unsigned long i = std::strtoul(k.c_str(), &end, 10);
      if (k.empty() || *end || i >= v.vector().size()) return nullptr;
      return &v.vector()[i];
    }
    return nullptr;
  }
  const Variant* Find() const {
    const Variant* v = root_.get();
    for (const auto& k : path_) {
      v = ChildOf(*v, k);
      if (!v) return nullptr;
    }
    return v;
  }
  /// The value here, made (as maps) where missing; a vector on the way becomes a map.
  Variant& Slot() {
    Variant* v = root_.get();
    for (const auto& k : path_) {
      if (v->is_vector()) {
        std::map<std::string, Variant> m;
        for (size_t i = 0; i < v->vector().size(); i++) m[std::to_string(i)] = v->vector()[i];
        *v = Variant(m);
      }
      if (!v->is_map()) *v = Variant(std::map<std::string, Variant>());
      v = &v->map()[Variant(k)];
    }
    return *v;
  }

  std::shared_ptr<Variant> root_;
  std::vector<std::string> path_;
  std::string key_;
};

}  // namespace database
}  // namespace ember

#endif
