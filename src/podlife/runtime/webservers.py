"""Built-in stand-ins for the web servers of the httpd and nginx images, whose programs (``httpd-foreground``,
``nginx``) are not on this machine: the conformance suite's StatefulSet, ReplicationController and Deployment
tests run them and wait for them to serve.

What they do of the real servers: listen on port 80 (their images' ``Listen 80`` and ``listen 80``) — of
the pod's address, as pods here share the machine's network (every address of a pod network namespace
upstream) —, answer GET and HEAD with the files of the image's document root — which, with a mount
namespace, is a directory of the container's own bound at the image's path (``/usr/local/apache2/htdocs``,
``/usr/share/nginx/html``), holding the image's ``index.html`` — and 404 for what is not there, and exit 0 at
SIGTERM (httpd's graceful stop, nginx's fast shutdown; podlife.runtime.behavior says the same of the real
ones). Nothing else of Apache or nginx (configuration, modules, other methods) is modelled, which ``podlife up``
says at start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from podlife.runtime import images

NOTE = ("the httpd and nginx images' servers run podlife's built-in static server (this machine's Python): "
        "port 80, the image's document root and index.html, exit 0 at SIGTERM")


@dataclass(frozen=True)
class WebServer:
    name: str
    docroot: str          # the image's document root
    index: str            # its index.html
    server: str           # the Server header


_HTTPD = WebServer("httpd", "/usr/local/apache2/htdocs", "<html><body><h1>It works!</h1></body></html>\n",
                   "Apache/2.4.38 (Unix)")
_NGINX = WebServer("nginx", "/usr/share/nginx/html",
                   "<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n"
                   "<h1>Welcome to nginx!</h1>\n</body>\n</html>\n", "nginx/1.14.2")
# images.repository() → (the server, the image's own argv for it: its ENTRYPOINT + CMD)
_IMAGES: dict[str, tuple[WebServer, tuple[tuple[str, ...], ...]]] = {
    "httpd": (_HTTPD, (("httpd-foreground",),)),
    "e2e-test-images/httpd": (_HTTPD, (("httpd-foreground",),)),
    "nginx": (_NGINX, (("/docker-entrypoint.sh", "nginx", "-g", "daemon off;"),)),
    "e2e-test-images/nginx": (_NGINX, (("nginx", "-g", "daemon off;"),)),
}
PORT = 80

_SERVE = r"""
import http.server, os, signal, sys
root, port, server, address = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
class Handler(http.server.SimpleHTTPRequestHandler):
    def version_string(self):
        return server
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=root, **kwargs)
    def log_message(self, fmt, *args):
        sys.stdout.write('%s - - [%s] "%s" %s %s\n' % (self.client_address[0], self.log_date_time_string(),
                                                      self.requestline, args[1] if len(args) > 1 else "-", "-"))
        sys.stdout.flush()
class Server(http.server.ThreadingHTTPServer):
    address_family = __import__("socket").AF_INET6 if ":" in address else __import__("socket").AF_INET
Server((address, port), Handler).serve_forever()
"""


def stand_in(image: str, argv: list[str]) -> WebServer | None:
    """The built-in server for an httpd or nginx image running its own program, else None."""
    known = _IMAGES.get(images.repository(image))
    if known is None or tuple(argv) not in known[1]:
        return None
    return known[0]


def document_root(pod_dir: str, name: str, container_id: str, web: WebServer) -> str:
    """The container instance's copy of the image's document root (its index.html), in the pod's directory."""
    path = os.path.join(pod_dir, "containers", name, f"{container_id[:8]}-{web.name}-docroot")
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o755)
    with open(os.path.join(path, "index.html"), "w") as f:
        f.write(web.index)
    os.chmod(os.path.join(path, "index.html"), 0o644)
    return path


def program(web: WebServer, root: str, address: str) -> list[str]:
    """The argv serving ``root`` (the path as the process sees it) on ``address`` ("": every address)."""
    return [images.python_for_everyone(), "-I", "-S", "-c", _SERVE, root, str(PORT), web.server, address]
