"""Runs the rules cases against one server over gRPC (Firestore v1), as allow or deny.

Responsible for: one channel and GAPIC FirestoreClient per server; putting the server back to
the seed before each case; sending a case's request with its token; and reading the answer as
an outcome. Every call is bounded (CALL_SECONDS, a Listen LISTEN_SECONDS).

    srv = RulesServer("127.0.0.1:8080", token_of=unsigned_token, seed_bearer="owner",
                      clear_url="http://127.0.0.1:8080/emulator/v1/projects/demo-rules/databases/(default)/documents")
    srv.reset(); srv.run(case)       # "allow", "deny", or "unexpected ..." (never raises for an answer)
    srv.close()

Outcomes: OK (or NOT_FOUND for a get) is allow, PERMISSION_DENIED is deny. A Listen is allowed
when a TargetChange CURRENT arrives, denied when a TargetChange REMOVE with cause.code 7 does.
The requests are wire.py's JSON parsed into protos: the same requests the recorder sends by REST
(a `"group": true` case is a collection-group query, in RunQuery and in a Listen query target).

Clearing: with `clear_url` (the emulator's DELETE endpoint) every document goes; without it (ember)
the documents the last case wrote are deleted and the seed is written over, in one commit.
"""
import json
import queue
import urllib.error
import urllib.request

import grpc
from google.api_core import exceptions
from google.cloud.firestore_v1.services.firestore import FirestoreClient, transports
from google.cloud.firestore_v1.types import firestore as fs
from google.cloud.firestore_v1.types import query as query_pb
from google.cloud.firestore_v1.types import write as write_pb

import wire
from cases import SEED
from tokens import PROJECT

CALL_SECONDS = 10
LISTEN_SECONDS = 5
PERMISSION_DENIED = 7
TARGET = 1
TargetChangeType = fs.TargetChange.TargetChangeType
# Sent on every call, as google-cloud-firestore does. The emulator needs it on Listen: without it
# the documents a Listen's rules read (resource.data, get(), exists()) are not found (as if read
# from another database), so e.g. a document listen whose get rule reads resource.data is denied.
EXTRA_METADATA = [("google-cloud-resource-prefix", f"projects/{PROJECT}/databases/(default)")]


class RulesServer:
    def __init__(self, host, token_of, seed_bearer, clear_url=None):
        self.channel = grpc.insecure_channel(host)
        self.client = FirestoreClient(transport=transports.FirestoreGrpcTransport(channel=self.channel))
        self.database = f"projects/{PROJECT}/databases/(default)"
        self.docs = f"{self.database}/documents"
        self.token_of = token_of
        self.seed_bearer = seed_bearer
        self.clear_url = clear_url
        self.written = set()            # paths the last case may have written (ember's clearing)

    def close(self):
        self.channel.close()

    @staticmethod
    def metadata(bearer):
        return ([("authorization", f"Bearer {bearer}")] if bearer else []) + EXTRA_METADATA

    def commit(self, writes, bearer):
        """writes: JSON Write dicts (wire.write)."""
        request = fs.CommitRequest(database=self.database,
                                   writes=[write_pb.Write.from_json(json.dumps(w)) for w in writes])
        self.client.commit(request=request, metadata=self.metadata(bearer), timeout=CALL_SECONDS, retry=None)

    def reset(self):
        """Only the seed is stored afterwards."""
        writes = []
        if self.clear_url:
            clear(self.clear_url)
        else:
            writes = [wire.write("delete", self.docs, p, None) for p in sorted(self.written - set(SEED))]
        writes += [wire.write("set", self.docs, p, d) for p, d in SEED.items()]
        self.commit(writes, self.seed_bearer)
        self.written = set()

    def run(self, case):
        """The outcome of one case (a dict from cases.unpack)."""
        bearer = self.token_of(case["auth"]) if case["auth"] else None
        method = case["method"]
        try:
            if method == "listen":
                return self.listen(case, bearer)
            if method == "get":
                self.client.get_document(request={"name": f"{self.docs}/{case['path']}"},
                                         metadata=self.metadata(bearer), timeout=CALL_SECONDS, retry=None)
            elif method == "list":
                parent, sq = wire.case_query(case)
                request = fs.RunQueryRequest(parent=f"{self.docs}/{parent}" if parent else self.docs,
                                             structured_query=query_pb.StructuredQuery.from_json(json.dumps(sq)))
                for _ in self.client.run_query(request=request, metadata=self.metadata(bearer),
                                               timeout=CALL_SECONDS, retry=None):
                    pass
            else:
                writes = wire.case_writes(case)
                self.written |= {path for _, path, _ in writes}
                self.commit([wire.write(op, self.docs, path, data) for op, path, data in writes], bearer)
        except exceptions.NotFound as e:
            return "allow" if method == "get" else unexpected(e)
        except exceptions.PermissionDenied:
            return "deny"
        except exceptions.GoogleAPICallError as e:
            return unexpected(e)
        return "allow"

    def listen(self, case, bearer):
        """Adds one target and waits for CURRENT or REMOVE; an allowed target is then removed
        (RemoveTarget, until its REMOVE) and the stream half-closed and read to its end, so the
        emulator holds no listener when it is cleared next. At most LISTEN_SECONDS in all."""
        path = case["path"]
        if path.count("/") % 2 == 1 and not case.get("group"):
            target = {"documents": {"documents": [f"{self.docs}/{path}"]}}
        else:
            parent, sq = wire.case_query(case)
            target = {"query": {"parent": f"{self.docs}/{parent}" if parent else self.docs,
                                "structuredQuery": sq}}
        target["targetId"] = TARGET
        outbox = queue.Queue()
        outbox.put(fs.ListenRequest.from_json(json.dumps({"database": self.database, "addTarget": target})))

        def requests():                 # ends (half-closes) at None or after LISTEN_SECONDS
            while True:
                try:
                    request = outbox.get(timeout=LISTEN_SECONDS)
                except queue.Empty:
                    return
                if request is None:
                    return
                yield request

        stream = None
        try:
            stream = self.client.listen(requests=requests(), metadata=self.metadata(bearer),
                                        timeout=LISTEN_SECONDS, retry=None)
            change, seen = next_change(stream, (TargetChangeType.CURRENT, TargetChangeType.REMOVE))
            if change is None:
                return f"unexpected end of the Listen stream after {seen}"
            if change.target_change_type == TargetChangeType.REMOVE:
                if change.cause.code != PERMISSION_DENIED:
                    return f"unexpected REMOVE with cause {change.cause.code}: {change.cause.message}"
                return "deny"
            outbox.put(fs.ListenRequest(database=self.database, remove_target=TARGET))
            removed, seen = next_change(stream, (TargetChangeType.REMOVE,))
            if removed is None or removed.cause.code:
                return f"unexpected answer to RemoveTarget after CURRENT: {seen}"
            outbox.put(None)
            for _ in stream:
                pass
            return "allow"
        except exceptions.GoogleAPICallError as e:
            return unexpected(e)
        finally:
            outbox.put(None)
            if stream is not None:
                stream.cancel()


def next_change(stream, types):
    """The next TargetChange of one of `types` for TARGET, and the kinds of what came before it;
    (None, seen) if the stream ends first."""
    seen = []
    for response in stream:
        kind = fs.ListenResponse.pb(response).WhichOneof("response_type")
        if kind != "target_change":
            seen.append(kind)
            continue
        change = response.target_change
        seen.append(change.target_change_type.name)
        if change.target_change_type in types and TARGET in change.target_ids:
            return change, seen
    return None, seen


def clear(url):
    """DELETE on the emulator's documents endpoint: every document of the database goes."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=CALL_SECONDS) as r:
            assert r.status == 200, r.status
    except urllib.error.HTTPError as e:
        raise AssertionError(f"DELETE {url}: {e.code} {e.read().decode('utf-8', 'replace')[:300]}") from None


def unexpected(error):
    code = error.grpc_status_code.name if error.grpc_status_code else type(error).__name__
    return f"unexpected {code}: {error.message}"[:300]
