"""The cluster's servers that are not the site: PostgreSQL, Redis, the HAProxy proxy and the
mail sink, each started for the run on its node (the machine's shared services are untouched)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from email import message_from_bytes
from glob import glob
from pathlib import Path
from typing import Any

from ops.cluster.net import Network
from ops.cluster.records import Delivery

SUBNET = "10.231.39"
WEB_NODES = ("web1", "web2")
# Each RCPT is answered after this long, as a real server takes a moment: the digests then go
# out over a few seconds, and the worker node's kill lands while they do.
SMTP_RCPT_DELAY = 0.04


def start_postgres(net: Network, *, password: str) -> None:
    """A throwaway PostgreSQL on its node: initdb into the run's folder, as the postgres user."""
    pg_bin = Path(sorted(glob("/usr/lib/postgresql/*/bin/postgres"))[-1]).parent
    pg_dir = net.run_dir / "postgres"
    pg_dir.mkdir()
    (pg_dir / "password").write_text(password)
    shutil.chown(pg_dir, "postgres", "postgres")
    shutil.chown(pg_dir / "password", "postgres", "postgres")
    as_postgres = ["setpriv", "--reuid", "postgres", "--regid", "postgres", "--init-groups"]
    subprocess.run(
        [*as_postgres, str(pg_bin / "initdb"), "-D", str(pg_dir / "data"), "-U", "postgres",
         "--auth-local=trust", "--auth-host=scram-sha-256",
         f"--pwfile={pg_dir / 'password'}", "--no-sync", "-E", "UTF8"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    with (pg_dir / "data" / "pg_hba.conf").open("a") as hba:
        hba.write(f"host all all {SUBNET}.0/24 scram-sha-256\n")
    net.start(
        "postgres",
        "postgres",
        [*as_postgres, "--pdeathsig", "KILL", "--", str(pg_bin / "postgres"),
         "-D", str(pg_dir / "data"),
         "-c", f"listen_addresses={net.address('postgres')}",
         # Its own socket folder: the machine's shared server keeps /var/run/postgresql.
         "-c", f"unix_socket_directories={pg_dir}",
         # A throwaway database: no crash safety needed (nothing here kills PostgreSQL).
         "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
         "-c", "max_connections=150"],
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        cwd=pg_dir,
    )  # fmt: skip


def connect_db(net: Network, *, password: str, dbname: str = "recall") -> Any:
    import psycopg

    return psycopg.connect(
        host=net.address("postgres"),
        user="postgres",
        password=password,
        dbname=dbname,
        autocommit=True,
        connect_timeout=2,
    )


def start_redis(net: Network) -> None:
    """A throwaway Redis on its node, no persistence."""
    (net.run_dir / "redis").mkdir()
    net.start(
        "redis",
        "redis",
        ["setpriv", "--pdeathsig", "KILL", "--", "redis-server",
         "--bind", net.address("redis"), "--port", "6379", "--protected-mode", "no",
         "--save", "", "--appendonly", "no", "--dir", str(net.run_dir / "redis")],
        env={"PATH": "/usr/bin:/bin"},
        cwd=net.run_dir,
    )  # fmt: skip


def proxy_config(net: Network) -> str:
    """HAProxy: TLS in front, round robin over the web nodes, each probed on /healthz every
    second (down after two failures, up after two passes); a log line per request with the
    driver's request id, the node and HAProxy's termination state."""
    servers = "\n".join(f"  server {node} {net.address(node)}:8000 check" for node in WEB_NODES)
    proxy = net.address("proxy")
    return f"""global
  maxconn 2000
  log stdout format raw local0
  stats socket {net.run_dir / "haproxy.sock"} mode 600 level admin
defaults
  mode http
  log global
  log-format "rid=%[capture.req.hdr(0)] srv=%s st=%ST ts=%tsc tt=%Ta"
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-request 30s
  # A connection the node refuses is tried again on the other node.
  retries 3
  option redispatch 1
frontend site
  bind {proxy}:443 ssl crt {net.run_dir / "proxy.pem"}
  http-request capture req.hdr(X-Request-ID) len 64
  http-request set-header X-Forwarded-Proto https
  default_backend web
backend web
  balance roundrobin
  option httpchk
  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host {proxy}
  http-check expect status 200
  default-server inter 1s fall 2 rise 2
{servers}
"""


def make_certificate(net: Network) -> None:
    """A self-signed certificate for the proxy's address (the driver trusts it)."""
    key, cert = net.run_dir / "proxy.key", net.run_dir / "proxy.crt"
    proxy = net.address("proxy")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
         "-subj", f"/CN={proxy}", "-addext", f"subjectAltName=IP:{proxy}",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    (net.run_dir / "proxy.pem").write_bytes(cert.read_bytes() + key.read_bytes())


def start_proxy(net: Network) -> None:
    (net.run_dir / "haproxy.cfg").write_text(proxy_config(net))
    net.start(
        "proxy",
        "haproxy",
        ["setpriv", "--pdeathsig", "KILL", "--", "haproxy", "-db", "-f",
         str(net.run_dir / "haproxy.cfg")],
        env={"PATH": "/usr/sbin:/usr/bin:/bin"},
        cwd=net.run_dir,
    )  # fmt: skip


def proxy_stats(net: Network) -> dict[str, dict[str, str]]:
    """HAProxy's `show stat` for the web backend's servers, by server name."""
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(2)
            sock.connect(str(net.run_dir / "haproxy.sock"))
            sock.sendall(b"show stat\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
    except OSError:
        return {}
    lines = data.decode().splitlines()
    if not lines:
        return {}
    header = lines[0].lstrip("# ").split(",")
    rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
    return {r["svname"]: r for r in rows if r.get("pxname") == "web" and r["svname"] in WEB_NODES}


@dataclass
class Sink:
    """The mail server: records each message's Message-ID, recipients and arrival."""

    deliveries: list[Delivery]
    lock: threading.Lock

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: Any
    ) -> str:
        import asyncio

        await asyncio.sleep(SMTP_RCPT_DELAY)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed = message_from_bytes(envelope.content)
        delivery = Delivery(str(parsed["Message-ID"]), tuple(envelope.rcpt_tos), time.monotonic())
        with self.lock:
            self.deliveries.append(delivery)
        return "250 2.0.0 Message accepted for delivery"
