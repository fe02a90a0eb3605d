"""The live Kubernetes API over podlife's store (``podlife up``), laid out as kube-apiserver's HTTP layer:
request routing (server), discovery, resources, tables, watch, subresources, field validation and patches,
OpenAPI, and podlife's own clock, fault and trace endpoints (control)."""
