"""Ember: an embeddable realtime document store with google-cloud-firestore's API.

    import ember
    db = ember.Client()                       # in memory; ember.Client(path=...) for durable storage
    sf = db.collection("cities").document("SF")
    watch = sf.on_snapshot(lambda docs, changes, read_time: print(docs[0].to_dict()))
    sf.set({"name": "San Francisco", "state": "CA"})
    watch.unsubscribe()

A CPython extension (`ember._ember`) over libember's C ABI; libember.so ships inside this package.
The contract is docs/python.md.

One module per concept, imported top-down (no module imports one listed after it; a test keeps
the graph acyclic): _errors, _values, _documents (snapshots, watches, listener dispatch),
_stream (snapshots() as an async iterator), _query, _references (DocumentReference,
CollectionReference), _batch, _transaction, _tree, _client, _async.
"""
from . import _ember
from ._errors import *  # noqa: F401,F403  (one class per error code)
from ._errors import BY_CODE as _BY_CODE, EmberError
from ._values import (And, ArrayRemove, ArrayUnion, BaseCompositeFilter, ChangeType, DELETE_FIELD, FieldFilter,
                      FieldPath, GeoPoint, Increment, ListenSource, Or, SERVER_TIMESTAMP, Source)
from ._documents import (DocumentChange, DocumentSnapshot, QuerySnapshot, SnapshotMetadata, Watch, WriteResult)
from ._stream import SnapshotStream
from ._query import AggregateQuery, AggregationResult, CollectionGroup, Query
from ._references import CollectionReference, DocumentReference
from ._batch import WriteBatch
from ._transaction import Transaction, transactional
from ._tree import DataSnapshot, EventType, Reference, ServerValue, TreeQuery
from ._client import CACHE_SIZE_UNLIMITED, Client, PersistentCacheIndexManager
from ._async import (AsyncClient, AsyncCollectionReference, AsyncDocumentReference, AsyncQuery, AsyncTransaction,
                     AsyncWriteBatch, AsyncWriteResult, async_transactional)

_ember.configure(
    errors=dict(_BY_CODE), error_base=EmberError, document_type=DocumentSnapshot, snapshot_type=QuerySnapshot,
    geopoint=GeoPoint, docref=DocumentReference, server_timestamp=SERVER_TIMESTAMP, delete_field=DELETE_FIELD,
    increment=Increment, array_union=ArrayUnion, array_remove=ArrayRemove)

__version__ = _ember.VERSION
Batch = WriteBatch

__all__ = [
    "ServerValue",
    "Client", "AsyncClient", "DocumentReference", "CollectionReference", "CollectionGroup", "Query",
    "AggregateQuery", "AggregationResult", "DocumentSnapshot", "QuerySnapshot", "DocumentChange",
    "SnapshotMetadata", "Watch", "WriteResult", "WriteBatch", "Transaction", "transactional",
    "async_transactional", "AsyncDocumentReference", "AsyncCollectionReference", "AsyncQuery",
    "AsyncTransaction", "AsyncWriteBatch", "AsyncWriteResult", "SnapshotStream",
    "GeoPoint", "SERVER_TIMESTAMP", "DELETE_FIELD", "Increment", "ArrayUnion", "ArrayRemove",
    "Source", "ListenSource", "ChangeType", "FieldPath", "FieldFilter", "And", "Or", "BaseCompositeFilter",
    "CACHE_SIZE_UNLIMITED", "PersistentCacheIndexManager", "EmberError",
    "Reference", "TreeQuery", "DataSnapshot", "EventType",
] + [row[2] for row in _errors.TABLE]
