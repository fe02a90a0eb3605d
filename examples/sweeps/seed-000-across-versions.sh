#!/usr/bin/env sh
# Seed 000's pod on every version that can run its sidecar: which take 22 s to stop it, which 7 s.
#
# 1.18 runs the incident's own manifest (`lifecycle.type: Sidecar`, the sidecar pull request its kubelet
# carried): the sidecar's preStop runs twice and a -3 s override makes docker wait, so the sidecar exits
# 21.4 s after the DELETE and the pod is removed after 33.6 s. From 1.28 the same pod is written with a native
# sidecar (an init container with restartPolicy: Always): 1.28, where SidecarContainers is alpha and must be
# turned on (spec.cluster.featureGates), stops both containers together (5.6 s to removal); 1.29 and later stop
# the sidecar after the app (7.6 s). 1.19-1.27 have no sidecar of either kind, and 1.28 with its default gates
# drops the restartPolicy and refuses the sidecar's preStop hook.
#
# Run from the repository root:  sh examples/sweeps/seed-000-across-versions.sh
set -eu
out=${TMPDIR:-/tmp}/podlife-seed-000
mkdir -p "$out"
podlife sweep examples/seed-000-sidecar-graceful-exit.yaml --vary kubernetesVersion=1.18 --out "$out/legacy.csv"
podlife sweep examples/seed-000-native-sidecar.yaml --vary kubernetesVersion=1.28 \
    --vary spec.cluster.featureGates.SidecarContainers=true --out "$out/native-1.28.csv"
podlife sweep examples/seed-000-native-sidecar.yaml --vary kubernetesVersion=1.29..1.37 --out "$out/native.csv"
echo "tables: $out/legacy.csv $out/native-1.28.csv $out/native.csv"
