// The header compiled as C++17 (-Wall -Werror -pedantic): extern "C" guards, no C-only syntax.
#include "ember.h"
#include <cstdio>

static_assert(EMBER_VERSION_NUMBER == EMBER_VERSION_MAJOR * 1000000 + EMBER_VERSION_MINOR * 1000 + EMBER_VERSION_PATCH, "version");

int main() {
    ember_error err{};
    ember_db *db = ember_db_open(nullptr, &err);
    ember_listener_token t = ember_doc_listen(db, "a/b", 0,
        [](void *, const ember_document *, const ember_error *) {}, nullptr, nullptr, &err);
    ember_listener_remove(t);
    ember_db_release(db);
    std::printf("C++17 header check: version %s, instances %lld\n", ember_libversion(), (long long)ember_instance_count());
    return ember_instance_count() == 0 ? 0 : 1;
}
