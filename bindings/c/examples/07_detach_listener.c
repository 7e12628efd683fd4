/* Seed 000, "Detach a listener": when events are no longer wanted, remove the listener.
 * ember_listener_remove is idempotent; once it returns the callback is not running and never
 * runs again, and the optional ctx_free given at registration has run (or runs once the
 * callback in progress returns).
 *
 *   C++: Query query = db->Collection("cities");
 *        ListenerRegistration registration = query.AddSnapshotListener(...);
 *        // Stop listening to changes
 *        registration.Remove();
 */
#include "example.h"

typedef struct state { int snapshots; } state;

static void on_snapshot(void *ctx, const ember_snapshot *snapshot, const ember_error *error) {
    state *s = ctx;
    if (error == NULL) {
        s->snapshots++;
        printf("snapshot %d: %zu cities\n", s->snapshots, ember_snapshot_size(snapshot));
    }
    event_seen();
}

static void on_gone(void *ctx) {
    printf("listener gone after %d snapshots\n", ((state *)ctx)->snapshots);
    free(ctx);
    event_seen();
}

int main(void) {
    ember_error err;
    ember_db *db = open_db();
    state *s = calloc(1, sizeof *s);
    /* Add a listener */
    ember_query *query = ember_query_new(db, "cities", &err);
    ember_listener_token registration;
    check(&err, "ember_query_new");
    registration = ember_query_listen(query, 0, on_snapshot, s, on_gone, &err);
    check(&err, "ember_query_listen");
    wait_events(1);

    set_json(db, "cities/SF", "{\"name\":\"San Francisco\"}");
    wait_events(2);
    wait_writes(db);

    /* Stop listening to changes */
    printf("-- remove\n");
    ember_listener_remove(registration);
    ember_listener_remove(registration);  /* idempotent: nothing happens */
    wait_events(3);                       /* on_gone */

    printf("-- writes after remove raise nothing\n");
    set_json(db, "cities/LA", "{\"name\":\"Los Angeles\"}");
    wait_writes(db);
    settle();

    ember_query_release(query);
    return finish(db);
}
