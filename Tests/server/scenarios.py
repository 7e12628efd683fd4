"""The scenarios the differential tests run: google-cloud-firestore scripts, unchanged between
the Firestore emulator and `ember serve`, each `f(db, p) -> JSON-able data` (see normalize.py).

    from scenarios import SCENARIOS
    result = SCENARIOS["filter_ranges"](db, "p1234_")

They live by subject in scenarios_writes.py (documents, transforms, preconditions, value types,
invalid writes), scenarios_batches.py (WriteBatch, BulkWriter, transactions), scenarios_filters.py
(every filter, the order of values), scenarios_queries.py (AND/OR, order, cursors, limits,
projection, invalid queries), scenarios_listings.py (collection groups,
recursive delete, list_documents, collection ids, get_all, count/sum/avg) and scenarios_listen.py
(document, query, collection and collection-group listeners).

Known emulator quirks (each is also noted where it matters):
- Failed write preconditions come in the emulator's storage-layer words ("no entity to update:
  app: ..." / "entity already exists: EntityRef{...}"): normalize.canonical_message rewrites
  them as Cloud Firestore's "No document to update: <name>" / "Document already exists: <name>".
- A stale update-time precondition says "the stored version (N) does not match the required base
  version (M)", and an oversized value 'The value of property "a" is longer than 1048487 bytes.':
  only the code is compared.
- Transactions lock what they read (a write from outside waits ~2 s then fails ABORTED): contention
  is not compared (ember serve is optimistic by design).
"""
from normalize import SCENARIOS  # noqa: F401  (filled by the imports below)
import scenarios_writes  # noqa: F401,E402
import scenarios_batches  # noqa: F401,E402
import scenarios_filters  # noqa: F401,E402
import scenarios_queries  # noqa: F401,E402
import scenarios_listings  # noqa: F401,E402
import scenarios_listen  # noqa: F401,E402
