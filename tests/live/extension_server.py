"""A small extension API server for the aggregator's tests, run as a process-runtime pod (``python3 -c``): HTTPS on
the pod's address with the certificate and key of the environment, and client certificates required, signed by
the requestheader CA of kube-system/extension-apiserver-authentication (FRONT_CA), as an extension server built
on k8s.io/apiserver trusts the front proxy. It serves group wardle.example.com/v1alpha1:

- ``GET /apis/wardle.example.com/v1alpha1``: its APIResourceList (flunders and flunders/status);
- ``GET …/namespaces/NS/flunders/echo``: a Flunder whose spec says what this request came with (headers, the
  client certificate's CN) and what the last discovery GET came with, and the pod's service account token;
- ``GET …/flunders?watch=true``: one ADDED event at once, a second only once ``POST …/flunders/release`` came,
  then the end of the stream."""

PROGRAM = r'''
import http.server, json, os, ssl, threading
d = "/certs"
for name in ("CERT", "KEY", "FRONT_CA"):
    open(os.path.join(d, name), "w").write(os.environ[name])
GV = "/apis/wardle.example.com/v1alpha1"
seen = {"discovery": None}
release = threading.Event()
RESOURCES = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "wardle.example.com/v1alpha1",
             "resources": [{"name": "flunders", "singularName": "flunder", "namespaced": True, "kind": "Flunder",
                            "verbs": ["get", "list", "watch"], "shortNames": ["fl"]},
                           {"name": "flunders/status", "singularName": "", "namespaced": True, "kind": "Flunder",
                            "verbs": ["get"]}]}
def flunder(name, spec):
    return {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def headers_seen(self):
        out = {}
        for k, v in self.headers.items():
            out.setdefault(k.lower(), []).append(v)
        return out
    def cn(self):
        subject = dict(x[0] for x in self.connection.getpeercert()["subject"])
        return subject.get("commonName")
    def send(self, code, doc):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
    def do_GET(self):
        path, _, query = self.path.partition("?")
        if path == GV:
            seen["discovery"] = {"headers": self.headers_seen(), "clientCN": self.cn()}
            return self.send(200, RESOURCES)
        if path == GV + "/namespaces/default/flunders/echo":
            token = open("/var/run/secrets/kubernetes.io/serviceaccount/token").read()
            return self.send(200, flunder("echo", {"headers": self.headers_seen(), "clientCN": self.cn(),
                                                   "query": query, "discovery": seen["discovery"],
                                                   "token": token}))
        if path == GV + "/namespaces/default/flunders" and "watch=true" in query:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.chunk(json.dumps({"type": "ADDED", "object": flunder("first", {})}).encode() + b"\n")
            release.wait(60)
            self.chunk(json.dumps({"type": "ADDED", "object": flunder("second", {})}).encode() + b"\n")
            self.chunk(b"")
            return
        self.send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == GV + "/namespaces/default/flunders/release":
            release.set()
            return self.send(201, flunder("release", {}))
        self.send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404})
s = http.server.ThreadingHTTPServer((os.environ["POD_IP"], 8443), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(os.path.join(d, "CERT"), os.path.join(d, "KEY"))
c.verify_mode = ssl.CERT_REQUIRED
c.load_verify_locations(os.path.join(d, "FRONT_CA"))
s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()
'''
