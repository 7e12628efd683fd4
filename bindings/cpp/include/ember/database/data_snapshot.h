// ember/database/data_snapshot.h: DataSnapshot (after firebase::database::DataSnapshot), the
// data at one location as read or as a listener received it. It keeps a reference on the C
// snapshot (ember_tree_snapshot_retain): copies are cheap and may outlive the callback.
//
//   for (const DataSnapshot& child : snapshot.children())
//     std::cout << child.key() << " = " << child.value() << std::endl;
#ifndef EMBER_DATABASE_DATA_SNAPSHOT_H
#define EMBER_DATABASE_DATA_SNAPSHOT_H

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

namespace ember {
namespace database {

class DatabaseReference;

class DataSnapshot {
 public:
  /// An invalid snapshot (is_valid() false).
  DataSnapshot() = default;
  /// Ember's addition: takes a reference on `snapshot` (owned or borrowed), the data at `path`.
  DataSnapshot(const ember_tree_snapshot* snapshot, internal::State state, std::string path)
      : s_(ember_tree_snapshot_retain(snapshot)), state_(std::move(state)), path_(std::move(path)) {}
  DataSnapshot(const DataSnapshot& o) : s_(ember_tree_snapshot_retain(o.s_)), state_(o.state_), path_(o.path_) {}
  DataSnapshot(DataSnapshot&& o) noexcept : s_(o.s_), state_(std::move(o.state_)), path_(std::move(o.path_)) {
    o.s_ = nullptr;
  }
  DataSnapshot& operator=(DataSnapshot o) noexcept {
    std::swap(s_, o.s_);
    std::swap(state_, o.state_);
    std::swap(path_, o.path_);
    return *this;
  }
  ~DataSnapshot() { ember_tree_snapshot_release(s_); }

  bool is_valid() const { return s_ != nullptr; }
  /// Whether anything is at the location (false: value() is null).
  bool exists() const { return s_ && ember_tree_snapshot_exists(s_); }
  /// The location's key; nullptr at the root (or when invalid). Valid while the snapshot lives.
  const char* key() const { return s_ ? ember_tree_snapshot_key(s_) : nullptr; }
  std::string key_string() const {
    const char* k = key();
    return k ? k : "";
  }
  /// The value: null, bool, int64, double, string, vector (dense integer keys) or map.
  Variant value() const {
    if (!s_) return Variant();
    size_t len = 0;
    char* bytes = ember_tree_snapshot_value(s_, EMBER_FORMAT_MSGPACK, &len, nullptr);
    Variant v = bytes ? internal::VariantFromMsgpack(bytes, len) : Variant();
    ember_free(bytes);
    return v;
  }
  /// Ember has no priorities: always null.
  Variant priority() const { return Variant(); }
  size_t children_count() const { return s_ ? ember_tree_snapshot_child_count(s_) : 0; }
  bool has_children() const { return children_count() > 0; }
  /// The direct children, in the order of the query that produced the snapshot (by key else).
  std::vector<DataSnapshot> children() const {
    std::vector<DataSnapshot> out;
    size_t n = children_count();
    out.reserve(n);
    for (size_t i = 0; i < n; i++) {
      const ember_tree_snapshot* c = ember_tree_snapshot_child_at(s_, i);
      if (!c) break;
      const char* k = ember_tree_snapshot_key(c);
      out.push_back(DataSnapshot(c, state_, internal::JoinPath(path_, k ? k : "")));
    }
    return out;
  }
  /// The data at a relative path ("a/b"); it may not exist. Invalid for a bad path.
  DataSnapshot Child(const char* path) const {
    if (!s_ || !path) return DataSnapshot();
    ember_tree_snapshot* c = ember_tree_snapshot_child(s_, path, nullptr);
    if (!c) return DataSnapshot();
    DataSnapshot out(c, state_, internal::JoinPath(path_, Trim(path)));
    ember_tree_snapshot_release(c);
    return out;
  }
  DataSnapshot Child(const std::string& path) const {
    return path.find('\0') == std::string::npos ? Child(path.c_str()) : DataSnapshot();
  }
  bool HasChild(const char* path) const { return Child(path).exists(); }
  bool HasChild(const std::string& path) const { return Child(path).exists(); }
  /// The location this data came from.
  DatabaseReference GetReference() const;
  /// Ember's addition: the location's path ("/posts/abc").
  const std::string& path() const { return path_; }
  /// Ember's addition: the C snapshot (borrowed), for mixing with the C ABI.
  const ember_tree_snapshot* handle() const { return s_; }

 private:
  static std::string Trim(std::string p) {
    while (!p.empty() && p.front() == '/') p.erase(0, 1);
    while (!p.empty() && p.back() == '/') p.pop_back();
    return p;
  }
  const ember_tree_snapshot* s_ = nullptr;
  internal::State state_;
  std::string path_;
};

}  // namespace database
}  // namespace ember

#endif
