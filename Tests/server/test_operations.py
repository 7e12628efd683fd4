"""What an operator and a load balancer see of `ember serve`: the gRPC health service
(grpc.health.v1.Health, Check and Watch, on the Firestore port), `GET /healthz` and `GET /metrics`
(the Prometheus text format) on the tree port. The health messages are encoded by hand (field 1
of each), so the test needs no generated health stubs."""
import os
import signal
import threading

import grpc
import pytest

import servers
from tree.rtdb_http import call, database_port

CHECK = "/grpc.health.v1.Health/Check"
WATCH = "/grpc.health.v1.Health/Watch"
SERVING, NOT_SERVING, SERVICE_UNKNOWN = 1, 2, 3


def request(service=""):
    data = service.encode()
    return b"" if not data else bytes([0x0A, len(data)]) + data


def status(message):
    """The ServingStatus of a HealthCheckResponse (an absent field is UNKNOWN, 0)."""
    if not message:
        return 0
    assert message[0] == 0x08, message
    return message[1]


def check(host, service=""):
    with grpc.insecure_channel(host) as ch:
        call_ = ch.unary_unary(CHECK, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        return status(call_(request(service), timeout=10))


def metrics(port):
    r = call(port, "GET", "/metrics")
    assert r.status == 200, r
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    values = {}
    for line in r.body.decode().splitlines():
        if line.startswith("#") or not line:
            continue
        name, value = line.rsplit(" ", 1)
        values[name] = float(value)
    return r.body.decode(), values


@pytest.fixture
def server(tmp_path):
    s = servers.start_ember(str(tmp_path), memory=True)
    yield s
    s.stop()


def test_check_answers_serving_for_the_server_and_the_firestore_service(server):
    assert check(server.host) == SERVING
    assert check(server.host, "google.firestore.v1.Firestore") == SERVING
    with pytest.raises(grpc.RpcError) as e:
        check(server.host, "no.such.Service")
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    assert "no.such.Service" in e.value.details()


def test_healthz_answers_serving_and_refuses_other_methods(server):
    port = database_port(server)
    r = call(port, "GET", "/healthz")
    assert (r.status, r.body) == (200, b"SERVING\n")
    assert call(port, "POST", "/healthz", body={}).status == 405
    # The REST API is untouched beside it.
    assert call(port, "PUT", "/healthz.json", body=1).status == 200
    assert call(port, "GET", "/healthz.json").json == 1


def test_metrics_count_commits_and_listen_targets(server):
    port = database_port(server)
    text, before = metrics(port)
    for name in ("ember_commits_total", "ember_listen_targets", "ember_streams", "ember_connections",
                 "ember_queued_output_bytes", "ember_serving"):
        assert f"# TYPE {name} " in text, text
        assert name in before
    assert before["ember_serving"] == 1
    assert "ember_pool_connections_max" not in before      # no PostgreSQL here
    db = servers.client(server.host)
    col = db.collection("ops-" + os.urandom(3).hex())
    for i in range(3):
        col.document(f"d{i}").set({"n": i})
    seen = threading.Event()
    watch = col.on_snapshot(lambda docs, changes, t: seen.set())
    try:
        assert seen.wait(10)
        _, after = metrics(port)
        assert after["ember_commits_total"] - before["ember_commits_total"] == 3
        assert after["ember_listen_targets"] >= before["ember_listen_targets"] + 1
        assert after["ember_streams"] >= 1
    finally:
        watch.unsubscribe()
        db.close()


def watch(host_channel, service=""):
    return host_channel.unary_stream(WATCH, request_serializer=lambda b: b, response_deserializer=lambda b: b)(
        request(service), timeout=30)


def test_watch_of_an_unknown_service_answers_service_unknown(server):
    with grpc.insecure_channel(server.host) as ch:
        assert [status(m) for m in watch(ch, "no.such.Service")] == [SERVICE_UNKNOWN]


def test_watch_sends_serving_then_not_serving_when_the_server_stops(tmp_path):
    s = servers.start_ember(str(tmp_path), memory=True)
    try:
        with grpc.insecure_channel(s.host) as ch:
            stream = watch(ch)
            assert status(next(stream)) == SERVING
            os.kill(s.process.pid, signal.SIGTERM)
            rest = []
            try:
                for m in stream:
                    rest.append(status(m))
            except grpc.RpcError as e:
                assert e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED), e
            assert rest[:1] == [NOT_SERVING], rest
    finally:
        s.stop()
