// The system SQLite (libsqlite3-dev), as GRDB's GRDBSQLite target exposes it.
#include <sqlite3.h>
