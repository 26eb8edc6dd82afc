#!/usr/bin/env python3
"""A fixed load for profiling `mcp-tasks serve` (see bench/profile.sh).

Sends exactly the requests `mcp-tasks bench` sends (MCP 2026-07-28
`tools/call counted_job` and `tasks/get`), from a few threads each with one
keep-alive connection, so a profile of the server can be divided by the
number of requests. The load is fixed (a count, not a duration), because
the profiler slows the server down and counts instructions, not time.

usage: profile_load.py URL SCENARIO COUNT [CLIENTS] [--ids FILE]
  create  COUNT creations of live tasks (their tool works for an hour)
  fill    COUNT tasks, half finished (seen completed) and half live; their
          ids are written to --ids FILE
  get     COUNT tasks/get spread over the ids in --ids FILE
  e2e     COUNT trivial tasks created, then polled until seen completed
Prints one line: the requests it sent (creations, gets).
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

LIVE_MS = 3_600_000
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-tasks-profile", "version": "0"},
}


class Client:
    """One keep-alive HTTP/1.1 connection to the MCP endpoint."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.host, self.path = parts.netloc, parts.path
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port)
        self.next_id = 0

    def rpc(self, method, name, params):
        self.next_id += 1
        params = dict(params, _meta=META)
        body = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        headers = {
            "host": self.host,
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
            "mcp-name": name,
        }
        self.conn.request("POST", self.path, body, headers)
        response = self.conn.getresponse()
        text = response.read()
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {text[:200]!r}")
        reply = json.loads(text)
        if "error" in reply:
            raise RuntimeError(f"JSON-RPC error: {reply['error']}")
        return reply["result"]

    def create(self, ms):
        result = self.rpc("tools/call", "counted_job", {"name": "counted_job", "arguments": {"ms": ms}})
        if result.get("resultType") != "task":
            raise RuntimeError(f"not a task handle: {result}")
        return result["taskId"]

    def status(self, task_id):
        return self.rpc("tasks/get", task_id, {"taskId": task_id})["status"]


def in_threads(clients, work, shares):
    """Runs work(client, share) on `clients` threads; re-raises the first failure."""
    failures, threads = [], []

    def run(share):
        try:
            work(Client(URL), share)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)

    for share in shares:
        threads.append(threading.Thread(target=run, args=(share,)))
        threads[-1].start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]


def split(n, clients):
    return [n // clients + (1 if c < n % clients else 0) for c in range(clients)]


def create_many(n, clients, ms):
    ids, lock = [], threading.Lock()

    def work(client, share):
        mine = [client.create(ms) for _ in range(share)]
        with lock:
            ids.extend(mine)

    in_threads(clients, work, split(n, clients))
    return ids


def wait_completed(ids, clients):
    """Polls each id until completed; returns the number of polls."""
    polls, lock = [0], threading.Lock()

    def work(client, share):
        sent = 0
        for task_id in share:
            while True:
                sent += 1
                status = client.status(task_id)
                if status == "completed":
                    break
                if status not in ("working", "input_required"):
                    raise RuntimeError(f"task {task_id} ended {status}")
                time.sleep(0.002)
        with lock:
            polls[0] += sent

    in_threads(clients, work, [ids[c::clients] for c in range(clients)])
    return polls[0]


def main():
    global URL
    args = sys.argv[1:]
    ids_file = None
    if "--ids" in args:
        at = args.index("--ids")
        ids_file = args[at + 1]
        del args[at : at + 2]
    URL, scenario, count = args[0], args[1], int(args[2])
    clients = int(args[3]) if len(args) > 3 else 16
    if scenario == "create":
        create_many(count, clients, LIVE_MS)
        print(f"creations {count} gets 0")
    elif scenario == "fill":
        done = create_many(count // 2, clients, 0)
        wait_completed(done, clients)
        live = create_many(count - count // 2, clients, LIVE_MS)
        with open(ids_file, "w") as f:
            f.write("\n".join(done + live))
        print(f"stored {count}")
    elif scenario == "get":
        ids = open(ids_file).read().split()

        def work(client, share):
            start, n = share
            for i in range(n):
                client.status(ids[(start + i * 7919) % len(ids)])

        stride = max(len(ids) // clients, 1)
        in_threads(clients, work, [(c * stride, n) for c, n in enumerate(split(count, clients))])
        print(f"creations 0 gets {count}")
    elif scenario == "e2e":
        ids = create_many(count, clients, 0)
        polls = wait_completed(ids, clients)
        print(f"creations {count} gets {polls}")
    else:
        sys.exit(f"unknown scenario {scenario!r}")


if __name__ == "__main__":
    main()
