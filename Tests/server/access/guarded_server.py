"""An `ember serve --rules` for the access tests, and every gRPC call they make to it, read back.

Responsible for: writing the rules, an HS256 secret, an admin token (and a JWKS when asked) into a
directory and starting `ember serve --memory` with them (../servers.py: bounded start, stopped by
its process group); and the Firestore v1 calls (GAPIC FirestoreClient, 10 s each) made with a
bearer, each read back as an Outcome: the status code name, its message and every response that
arrived, so a test checks the code and that no response carried protected data. Listen and Write
streams are read by a thread (Bidi) with bounded waits.

    g = Guarded.start(tmpdir, RULES)                 # pytest.fail if it cannot start
    g.seed({"secret/s1": {"owner": "victim"}})       # as the admin
    out = g.caller.get("secret/s1", g.token("victim"))
    assert out.code == "OK" and out.leaks("victim")     # the data arrived
    g.stop()

The requests are built as ../rules/grpc_rules.py builds them (../rules/wire.py's JSON parsed into protos).
"""
import json
import os
import queue
import re
import secrets
import sys
import threading
import time

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.firestore_v1.services.firestore import FirestoreClient, transports
from google.cloud.firestore_v1.types import document as document_pb
from google.cloud.firestore_v1.types import firestore as fs
from google.cloud.firestore_v1.types import query as query_pb
from google.cloud.firestore_v1.types import write as write_pb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "rules"))
import servers  # noqa: E402
import wire  # noqa: E402
from jwts import PROJECT, claims, hs  # noqa: E402

CALL_SECONDS = 10          # every unary or server-streaming call
STREAM_SECONDS = 15        # the deadline of a whole Listen/Write stream
WAIT_SECONDS = 5           # the longest wait for one awaited stream message
DENIED = "Missing or insufficient permissions."
TargetChangeType = fs.TargetChange.TargetChangeType

RULES_HEADER = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n"
RULES_FOOTER = "  }\n}\n"


def rules(body):
    """A whole rules file around the `match` blocks in `body` (under /databases/{database}/documents)."""
    return RULES_HEADER + body + RULES_FOOTER


def require_ember():
    """Skips under EMBER_SERVER_TESTS=emulator-only; fails (never skips) without the binary."""
    if os.environ.get("EMBER_SERVER_TESTS") == "emulator-only":
        pytest.skip("EMBER_SERVER_TESTS=emulator-only")
    why = servers.ember_missing()
    if why:
        pytest.fail(why, pytrace=False)


def write_file(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w" if isinstance(text, str) else "wb") as f:
        f.write(text)
    return path


class Guarded:
    """One `ember serve --memory --rules` with its secret, admin token and a Caller for it."""

    def __init__(self, srv, secret, admin, tmpdir):
        self.srv, self.secret, self.admin, self.tmpdir = srv, secret, admin, tmpdir
        self.caller = Caller(srv.host, admin)

    @classmethod
    def start(cls, tmpdir, rules_text, jwks_text=None, extra_args=()):
        require_ember()
        secret = secrets.token_hex(32).encode()
        admin = "admin-" + secrets.token_hex(16)
        args = ["--rules", write_file(tmpdir, "access.rules", rules_text),
                "--jwt-secret-file", write_file(tmpdir, "jwt-secret", secret + b"\n"),   # trimmed
                "--admin-token-file", write_file(tmpdir, "admin-token", admin)]
        if jwks_text is not None:
            args += ["--jwks", write_file(tmpdir, "jwks.json", jwks_text)]
        try:
            srv = servers.start_ember(tmpdir, memory=True, extra_args=args + list(extra_args))
        except servers.StartError as e:
            pytest.fail(str(e), pytrace=False)
        return cls(srv, secret, admin, tmpdir)

    def token(self, uid, **overrides):
        """An HS256 token for `uid` signed with this server's secret."""
        return hs(claims(uid, **overrides), self.secret)

    def seed(self, docs):
        """Writes {path: data} as the admin (set, no precondition); asserts it was applied."""
        out = self.caller.commit([wire.write("set", self.caller.docs, p, d) for p, d in docs.items()], self.admin)
        assert out.code == "OK", f"seeding as the admin: {out}"

    def admin_get(self, path):
        """The document's fields as plain values, or None if it does not exist (read as the admin)."""
        out = self.caller.get(path, self.admin)
        if out.code == "NOT_FOUND":
            return None
        assert out.code == "OK", f"admin get {path}: {out}"
        return plain_fields(out.responses[0])

    def log(self):
        return self.srv.log_tail(2000)

    def stop(self):
        self.caller.close()
        self.srv.stop()


START_LINE = re.compile(r"\bevent=start\b.*\bport=(\d+)")
EXIT_STATUS = re.compile(r"exited during start-up \(status (-?\d+)\)")
LAUNCH_SECONDS = 20


class Launched:
    """What `ember serve ARGS` did: started (srv: a servers.Server on the port its start line
    printed; stop it) or exited (status, and its log)."""

    def __init__(self, srv=None, status=None, log=""):
        self.srv, self.status, self.log = srv, status, log

    def __repr__(self):
        return f"Launched(started on port {self.srv.port})" if self.srv else \
            f"Launched(exited with status {self.status}: {self.log.strip()!r})"


def _start_line_seen(server):
    with open(server.log_path, "rb") as f:
        for line in f.read().decode("utf-8", "replace").splitlines():
            m = START_LINE.search(line)
            if m:
                server.port = int(m.group(1))
                return True
    return False


def launch(tmpdir, args, name="ember"):
    """Runs `ember serve --memory ARGS` (ARGS should hold --port) as ../servers.py runs a server
    (own process group, watchdog) until its start line or its exit, at most LAUNCH_SECONDS."""
    require_ember()
    log = os.path.join(tmpdir, f"{name}.log")
    try:
        srv = servers.Server("ember serve", [servers.EMBER_BIN, "serve", "--memory", *args], 0, log,
                             _start_line_seen, LAUNCH_SECONDS)
    except servers.StartError as e:
        m = EXIT_STATUS.search(str(e))
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        if not m:
            pytest.fail(f"ember serve {' '.join(args)} neither started nor exited: {e}", pytrace=False)
        return Launched(status=int(m.group(1)), log=text)
    return Launched(srv=srv)


class Outcome:
    """What one call got: the status code name ("OK", "PERMISSION_DENIED", ...), its message and
    every response that arrived before it ended."""

    def __init__(self, code, message="", responses=()):
        self.code, self.message, self.responses = code, message, list(responses)

    def leaks(self, marker):
        """True if `marker` (a string) is in any response or in the message."""
        needle = marker.encode()
        return needle in self.message.encode() or any(needle in serialized(r) for r in self.responses)

    def __repr__(self):
        shown = [str(type(r).pb(r)).strip()[:300] for r in self.responses[:3]]
        return f"Outcome({self.code}, {self.message!r}, {len(self.responses)} responses {shown})"


def serialized(message):
    return type(message).pb(message).SerializeToString() if hasattr(type(message), "pb") else str(message).encode()


def error_outcome(e, responses=()):
    if isinstance(e, exceptions.GoogleAPICallError):
        code = e.grpc_status_code.name if e.grpc_status_code is not None else type(e).__name__
        return Outcome(code, e.message or "", responses)
    return Outcome(f"{type(e).__name__}", str(e), responses)


def unary(call):
    try:
        return Outcome("OK", "", [call()])
    except (exceptions.GoogleAPICallError, grpc.RpcError) as e:
        return error_outcome(e)


def streamed(call):
    """Reads a server stream (or pager) to its end; responses kept even when it ends in error."""
    got = []
    try:
        for r in call():
            got.append(r)
        return Outcome("OK", "", got)
    except (exceptions.GoogleAPICallError, grpc.RpcError) as e:
        return error_outcome(e, got)


def plain(value):
    pb = document_pb.Value.pb(value)
    kind = pb.WhichOneof("value_type")
    if kind == "map_value":
        return {k: plain(v) for k, v in value.map_value.fields.items()}
    if kind == "array_value":
        return [plain(v) for v in value.array_value.values]
    return None if kind == "null_value" else getattr(value, kind)


def plain_fields(document):
    return {k: plain(v) for k, v in document.fields.items()}


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


class Bidi:
    """One bidirectional stream (Listen or Write): requests sent through a queue, responses read
    by a thread; every wait bounded. The call itself starts on the reader thread (the GAPIC
    wrapper blocks until the first response), with a STREAM_SECONDS deadline."""

    _END = object()

    def __init__(self, method, metadata):
        self._outbox = queue.Queue()
        self._inbox = queue.Queue()
        self._closed = threading.Event()
        self._call = None
        self.responses = []           # everything received, for leak checks
        self.end = None               # an Outcome once the stream has ended
        self._reader = threading.Thread(target=self._read, args=(method, metadata), daemon=True)
        self._reader.start()

    def _requests(self):
        while not self._closed.is_set():
            try:
                request = self._outbox.get(timeout=0.2)
            except queue.Empty:
                continue
            if request is None:
                return
            yield request

    def _read(self, method, metadata):
        try:
            self._call = method(requests=self._requests(), metadata=metadata, timeout=STREAM_SECONDS, retry=None)
            if self._closed.is_set():
                self._call.cancel()
            for response in self._call:
                self._inbox.put(response)
            self._inbox.put(Outcome("OK"))
        except (exceptions.GoogleAPICallError, grpc.RpcError) as e:
            self._inbox.put(error_outcome(e))
        except Exception as e:          # noqa: BLE001 - reported to the test, never swallowed
            self._inbox.put(Outcome(type(e).__name__, str(e)))

    def send(self, request):
        self._outbox.put(request)

    def next(self, seconds=WAIT_SECONDS):
        """The next response; None if the stream has ended (see .end) or nothing came in time."""
        if self.end is not None:
            return None
        try:
            item = self._inbox.get(timeout=seconds)
        except queue.Empty:
            return None
        if isinstance(item, Outcome):
            self.end = item
            return None
        self.responses.append(item)
        return item

    def wait_for(self, predicate, seconds=WAIT_SECONDS):
        """The first response for which predicate holds, within `seconds`; None if the stream
        ends first or the time runs out. Responses passed over stay in .responses."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            response = self.next(left)
            if response is None:
                return None
            if predicate(response):
                return response

    def wait_end(self, seconds=WAIT_SECONDS):
        """The stream's end Outcome, reading (and keeping) what comes before; None if still open."""
        deadline = time.monotonic() + seconds
        while self.end is None and time.monotonic() < deadline:
            self.next(deadline - time.monotonic())
        return self.end

    def leaks(self, marker):
        return Outcome("", "", self.responses).leaks(marker) or (self.end is not None and self.end.leaks(marker))

    def kinds(self):
        """What arrived, briefly: target_change TYPE[ids] code / document_change / ..."""
        out = []
        for r in self.responses:
            kind = fs.ListenResponse.pb(r).WhichOneof("response_type") if isinstance(r, fs.ListenResponse) \
                else "write_response"
            if kind == "target_change":
                c = r.target_change
                out.append(f"{c.target_change_type.name}{list(c.target_ids)}"
                           + (f" cause={c.cause.code}" if c.cause.code else ""))
            else:
                out.append(kind)
        return out + ([f"end {self.end.code} {self.end.message!r}"] if self.end else [])

    def close(self):
        self._closed.set()
        self._outbox.put(None)
        if self._call is not None:
            self._call.cancel()
        self._reader.join(STREAM_SECONDS + 5)


def target_change(target_id, *types, code=None):
    """A predicate: a TargetChange of one of `types` naming `target_id` (and with cause `code`)."""
    def match(response):
        if fs.ListenResponse.pb(response).WhichOneof("response_type") != "target_change":
            return False
        c = response.target_change
        return (c.target_change_type in types and target_id in c.target_ids
                and (code is None or c.cause.code == code))
    return match


def document_change(target_id, marker):
    """A predicate: a DocumentChange for `target_id` whose document carries `marker`."""
    def match(response):
        if fs.ListenResponse.pb(response).WhichOneof("response_type") != "document_change":
            return False
        return target_id in response.document_change.target_ids and marker.encode() in serialized(response)
    return match
