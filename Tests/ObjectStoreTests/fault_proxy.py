# A fault-injecting HTTP proxy in front of an S3 store, for the publish tests (run through
# PythonServer, which defines serve()). Usage: fault_proxy.py UPSTREAM_PORT MODE N
#   flaky N:      the first attempt of every Nth distinct PUT key gets a 503 SlowDown (a retry succeeds)
#   fail-after N: every PUT after the Nth content PUT gets a 500 InternalError
#   fail-part N:  every PUT of part N of a multipart upload gets a 500 InternalError
#   no-conditions N: no faults; If-None-Match is dropped (a store without conditional writes)
# The lock key (.folio-publish-lock) is never faulted. GET /__stats answers the counts as JSON.
import http.client, http.server, json, sys, threading

upstream, mode, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
lock = threading.Lock()
stats = {"puts": 0, "faults": 0, "keys": 0}
seen = set()

def fault_for(path):
    if ".folio-publish-lock" in path:
        return None
    with lock:
        stats["puts"] += 1
        key = path.split("?")[0]
        first = key not in seen
        if first:
            seen.add(key)
            stats["keys"] += 1
        if mode == "flaky" and first and stats["keys"] % n == 0:
            stats["faults"] += 1
            return (503, "SlowDown", "Please reduce your request rate.")
        failing_part = mode == "fail-part" and ("partNumber=%d&" % n in path + "&")
        if (mode == "fail-after" and stats["puts"] > n) or failing_part:
            stats["faults"] += 1
            return (500, "InternalError", "We encountered an internal error. Please try again.")
    return None

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, ctype="application/xml"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/__stats":
            return self.answer(200, json.dumps(stats).encode(), "application/json")
        if self.command == "PUT":
            fault = fault_for(self.path)
            if fault:
                code, name, message = fault
                xml = "<?xml version=\"1.0\"?><Error><Code>%s</Code><Message>%s</Message></Error>" % (name, message)
                return self.answer(code, xml.encode())
        conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=60)
        dropped = ("connection", "content-length") + (("if-none-match",) if mode == "no-conditions" else ())
        headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
        conn.request(self.command, self.path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        self.send_response(r.status, r.reason)
        for k, v in r.getheaders():
            if k.lower() not in ("connection", "transfer-encoding", "content-length", "server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        conn.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward

serve(Handler)
