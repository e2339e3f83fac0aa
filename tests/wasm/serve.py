#!/usr/bin/env python3
"""serve.py DIR PORTFILE TIMEOUT - serve DIR on 127.0.0.1 (a free port,
written to PORTFILE once listening) until a page POSTs its result to
/result, then print the result and exit 0; exit 2 if none came within
TIMEOUT seconds.  POST /log lines are printed as they come (the page's
progress).  Used by tests/wasm/run.sh and bench/web/run.sh, which start
headless Chromium on http://127.0.0.1:PORT/PAGE.html."""
import http.server
import os
import sys
import time

root, portfile, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
result = []


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".mjs": "text/javascript",
                      ".js": "text/javascript"}

    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        text = body.decode("utf-8", "replace")
        if self.path == "/result":
            result.append(text)
        else:
            print("page:", text, flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *a):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
srv.timeout = 0.5
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
end = time.time() + timeout
while not result and time.time() < end:
    srv.handle_request()
srv.server_close()
if not result:
    print("serve.py: no result from the page within %g s" % timeout, flush=True)
    sys.exit(2)
print(result[0], flush=True)
