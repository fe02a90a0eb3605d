"""The aggregation layer of ``podlife up`` (staging/src/k8s.io/kube-aggregator): APIService objects for the
built-in group versions (registration), their Available condition (available), the proxy to an extension API
server behind a Service (resolve, frontproxy, proxy) and the aggregated groups in discovery (groups)."""
