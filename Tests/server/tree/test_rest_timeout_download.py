"""The tree's `timeout`, `writeSizeLimit` and `download` parameters (issue 28).

Responsible for: `timeout` accepted as <n>ms|s|min up to 15 min and refused otherwise (400), a
read slower than its timeout answered 400 instead of the value; `writeSizeLimit` accepted with
the Realtime Database's five values and refused otherwise, a refused write changing nothing;
`download=<name>` answered as an attachment with that file name.
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import servers  # noqa: E402
from tree_http import database_port, request  # noqa: E402


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    why = servers.ember_missing()
    if why:
        pytest.fail(why)
    srv = servers.start_ember(str(tmp_path_factory.mktemp("tree-params")), memory=True)
    yield database_port(srv)
    srv.stop()


@pytest.mark.parametrize("value", ["3ms", "1s", "15min", "900s"])
def test_timeout_accepted(port, value):
    assert request(port, "GET", f"/t.json?ns=p&timeout={value}")[0] == 200


@pytest.mark.parametrize("value", ["3", "s", "-1s", "0s", "1h", "16min", "901s", "1.5s", "ms"])
def test_timeout_refused(port, value):
    status, _, body = request(port, "GET", f"/t.json?ns=p&timeout={value}")
    assert status == 400 and "timeout" in body["error"], body


def test_a_read_slower_than_its_timeout_is_400(port):
    big = {f"k{i:06d}": {"v": i, "s": "x" * 20} for i in range(40_000)}
    assert request(port, "PUT", "/big.json?ns=p&print=silent", big, timeout=60)[0] == 204
    status, _, body = request(port, "GET", "/big.json?ns=p&timeout=1ms", timeout=60)
    assert status == 400 and "timeout=1ms" in body["error"], (status, str(body)[:200])
    status, _, body = request(port, "GET", "/big.json?ns=p&timeout=5min", timeout=60)
    assert status == 200 and len(body) == 40_000


@pytest.mark.parametrize("value", ["tiny", "small", "medium", "large", "unlimited"])
def test_write_size_limit_accepted(port, value):
    assert request(port, "PUT", f"/w.json?ns=p&writeSizeLimit={value}", {"a": 1})[0] == 200


def test_write_size_limit_refused_changes_nothing(port):
    assert request(port, "PUT", "/w2.json?ns=p", 1)[0] == 200
    status, _, body = request(port, "PUT", "/w2.json?ns=p&writeSizeLimit=huge", 2)
    assert status == 400 and "writeSizeLimit" in body["error"]
    assert request(port, "GET", "/w2.json?ns=p")[2] == 1


def test_download_is_an_attachment(port):
    assert request(port, "PUT", "/d.json?ns=p", {"a": 1})[0] == 200
    status, headers, body = request(port, "GET", "/d.json?ns=p&download=backup.json")
    assert status == 200 and body == {"a": 1}
    assert headers["content-disposition"] == 'attachment; filename="backup.json"'
