"""Every Firestore v1 call the access tests make, with a bearer, read back as an Outcome.

Responsible for: one channel (plaintext, or the TLS one given) and GAPIC FirestoreClient per
server and project; the requests (../rules/wire.py's JSON parsed into protos, as
../rules/grpc_rules.py builds them) of each read, write and stream; `authorization: Bearer <token>`
(none for None) and the resource prefix on every call, each with a CALL_SECONDS deadline.

    caller = Caller("127.0.0.1:8080")
    caller.get("secret/s1", token)                                   # Outcome
    caller.run_query(Caller.query("secret", [["owner", "==", "v"]]), token)
    caller.listen_once(token, caller.doc_target("secret/s1"))        # OK / PERMISSION_DENIED / ...
"""
import json
import os
import sys

import grpc
from google.cloud.firestore_v1.services.firestore import FirestoreClient, transports
from google.cloud.firestore_v1.types import document as document_pb
from google.cloud.firestore_v1.types import firestore as fs
from google.cloud.firestore_v1.types import query as query_pb
from google.cloud.firestore_v1.types import write as write_pb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules"))
import wire  # noqa: E402
from access_outcome import CALL_SECONDS, Outcome, streamed, unary  # noqa: E402
from access_streams import WAIT_SECONDS, Bidi, TargetChangeType, target_change  # noqa: E402
from jwts import PROJECT  # noqa: E402


class Caller:
    """Firestore v1 calls to one server on one project, each with a bearer (None: no header)."""

    def __init__(self, host, admin=None, project=PROJECT, channel=None):
        self.channel = channel or grpc.insecure_channel(host)
        self.client = FirestoreClient(transport=transports.FirestoreGrpcTransport(channel=self.channel))
        self.database = f"projects/{project}/databases/(default)"
        self.docs = f"{self.database}/documents"
        self.prefix = [("google-cloud-resource-prefix", self.database)]
        self.admin = admin

    def close(self):
        self.channel.close()

    def metadata(self, bearer):
        return ([("authorization", f"Bearer {bearer}")] if bearer else []) + self.prefix

    def name(self, path):
        return f"{self.docs}/{path}" if path else self.docs

    def kw(self, bearer):
        return {"metadata": self.metadata(bearer), "timeout": CALL_SECONDS, "retry": None}

    # reads
    def get(self, path, bearer, transaction=None):
        request = fs.GetDocumentRequest(name=self.name(path), transaction=transaction)
        return unary(lambda: self.client.get_document(request=request, **self.kw(bearer)))

    def batch_get(self, paths, bearer, transaction=None):
        request = fs.BatchGetDocumentsRequest(database=self.database, documents=[self.name(p) for p in paths],
                                              transaction=transaction)
        return streamed(lambda: self.client.batch_get_documents(request=request, **self.kw(bearer)))

    def list_documents(self, collection, bearer, parent=""):
        request = fs.ListDocumentsRequest(parent=self.name(parent), collection_id=collection)
        return streamed(lambda: self.client.list_documents(request=request, **self.kw(bearer)))

    @staticmethod
    def query(collection, where=None, all_descendants=False):
        """A StructuredQuery: filters [[field, op, value], ...] ANDed (../rules/wire.py)."""
        sq = wire.structured_query(collection, {"where": where or []})
        if all_descendants:
            sq["from"][0]["allDescendants"] = True
        return sq

    def run_query(self, sq, bearer, parent="", transaction=None):
        request = fs.RunQueryRequest(parent=self.name(parent), transaction=transaction,
                                     structured_query=query_pb.StructuredQuery.from_json(json.dumps(sq)))
        return streamed(lambda: self.client.run_query(request=request, **self.kw(bearer)))

    def count(self, sq, bearer, parent=""):
        request = fs.RunAggregationQueryRequest.from_json(json.dumps({
            "parent": self.name(parent),
            "structuredAggregationQuery": {"structuredQuery": sq, "aggregations": [{"alias": "n", "count": {}}]}}))
        return streamed(lambda: self.client.run_aggregation_query(request=request, **self.kw(bearer)))

    def list_collection_ids(self, bearer, parent=""):
        request = fs.ListCollectionIdsRequest(parent=self.name(parent))
        return streamed(lambda: self.client.list_collection_ids(request=request, **self.kw(bearer)))

    def begin(self, bearer):
        return unary(lambda: self.client.begin_transaction(request={"database": self.database}, **self.kw(bearer)))

    def rollback(self, transaction, bearer):
        return unary(lambda: self.client.rollback(request={"database": self.database, "transaction": transaction},
                                                  **self.kw(bearer)))

    # writes (JSON Write dicts, as wire.write makes them)
    def commit(self, writes, bearer):
        request = fs.CommitRequest(database=self.database,
                                   writes=[write_pb.Write.from_json(json.dumps(w)) for w in writes])
        return unary(lambda: self.client.commit(request=request, **self.kw(bearer)))

    def batch_write(self, writes, bearer):
        request = fs.BatchWriteRequest(database=self.database,
                                       writes=[write_pb.Write.from_json(json.dumps(w)) for w in writes])
        return unary(lambda: self.client.batch_write(request=request, **self.kw(bearer)))

    def create_document(self, collection, doc_id, data, bearer):
        request = fs.CreateDocumentRequest(parent=self.docs, collection_id=collection, document_id=doc_id,
                                           document=document_pb.Document.from_json(json.dumps(
                                               {"fields": wire.fields(data)})))
        return unary(lambda: self.client.create_document(request=request, **self.kw(bearer)))

    def update_document(self, path, data, bearer):
        request = fs.UpdateDocumentRequest(document=document_pb.Document.from_json(json.dumps(
            {"name": self.name(path), "fields": wire.fields(data)})))
        return unary(lambda: self.client.update_document(request=request, **self.kw(bearer)))

    def delete_document(self, path, bearer):
        return unary(lambda: self.client.delete_document(request={"name": self.name(path)}, **self.kw(bearer)))

    # streams
    def listen(self, bearer):
        return Bidi(self.client.listen, self.metadata(bearer))

    def add_target(self, stream, target_id, target):
        """Adds a Listen target: doc_target(...) or query_target(...)."""
        stream.send(fs.ListenRequest.from_json(json.dumps(
            {"database": self.database, "addTarget": dict(target, targetId=target_id)})))

    def doc_target(self, *paths):
        return {"documents": {"documents": [self.name(p) for p in paths]}}

    def query_target(self, collection, where=None):
        return {"query": {"parent": self.docs, "structuredQuery": self.query(collection, where)}}

    def listen_once(self, bearer, target, target_id=1):
        """One Listen with one target, read until its CURRENT or REMOVE (or the stream's end) and
        closed: OK for CURRENT, PERMISSION_DENIED for a REMOVE with cause 7 (its message), the
        stream's status if it ends first; the responses are all that arrived."""
        stream = self.listen(bearer)
        try:
            self.add_target(stream, target_id, target)
            hit = stream.wait_for(target_change(target_id, TargetChangeType.CURRENT, TargetChangeType.REMOVE))
            if hit is None:
                end = stream.end or Outcome("NO_ANSWER", f"nothing decisive within {WAIT_SECONDS} s: {stream.kinds()}")
                return Outcome(end.code, end.message, stream.responses)
            change = hit.target_change
            if change.target_change_type == TargetChangeType.CURRENT:
                return Outcome("OK", "", stream.responses)
            code = "PERMISSION_DENIED" if change.cause.code == 7 else f"REMOVE with cause {change.cause.code}"
            return Outcome(code, change.cause.message, stream.responses)
        finally:
            stream.close()

    def write_stream(self, bearer):
        """A Write stream, its handshake (database only) already sent."""
        stream = Bidi(self.client.write, self.metadata(bearer))
        stream.send(fs.WriteRequest(database=self.database))
        return stream

    def stream_writes(self, stream, token, writes):
        stream.send(fs.WriteRequest(database=self.database, stream_token=token,
                                    writes=[write_pb.Write.from_json(json.dumps(w)) for w in writes]))
