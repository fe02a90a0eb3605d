"""The process runtime's pieces that need no cluster: the atomic writer's layout, image configs, SPDY framing."""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from podlife.apiserver import spdy3
from podlife.runtime import atomicwriter, images


def test_atomic_writer_layout_swap_and_no_write_when_unchanged(tmp_path: Path) -> None:
    vol = str(tmp_path / "vol")
    assert atomicwriter.write(vol, {"app.yaml": (b"a: 1\n", 0o600), "dir/x": (b"x", 0o644)})
    first = os.readlink(os.path.join(vol, "..data"))
    assert first.startswith("..") and os.path.isdir(os.path.join(vol, first))
    assert os.readlink(os.path.join(vol, "app.yaml")) == "..data/app.yaml"
    assert os.readlink(os.path.join(vol, "dir")) == "..data/dir"
    assert os.stat(os.path.join(vol, "app.yaml")).st_mode & 0o777 == 0o600
    assert not atomicwriter.write(vol, {"app.yaml": (b"a: 1\n", 0o600), "dir/x": (b"x", 0o644)})
    assert os.readlink(os.path.join(vol, "..data")) == first
    # an update: a new timestamped directory, the old one and a key that is gone removed
    assert atomicwriter.write(vol, {"app.yaml": (b"a: 2\n", 0o600)})
    second = os.readlink(os.path.join(vol, "..data"))
    assert second != first and not os.path.exists(os.path.join(vol, first))
    assert sorted(os.listdir(vol)) == sorted(["..data", second, "app.yaml"])
    assert Path(vol, "app.yaml").read_bytes() == b"a: 2\n"


def test_image_repositories_and_the_process_args_rule() -> None:
    assert images.repository("docker.io/library/busybox:1.36") == "busybox"
    assert images.repository("registry.k8s.io/e2e-test-images/agnhost:2.53") == "e2e-test-images/agnhost"
    assert images.repository("localhost:5000/app@sha256:abc") == "app"
    agnhost, err = images.image_config("registry.k8s.io/e2e-test-images/agnhost:2.53", {})
    assert err is None and agnhost is not None
    # containerd: command replaces ENTRYPOINT and CMD; args replace CMD only
    assert images.process_args([], [], agnhost) == ["/agnhost", "pause"]
    assert images.process_args([], ["netexec", "--http-port=8080"], agnhost) == ["/agnhost", "netexec",
                                                                                  "--http-port=8080"]
    assert images.process_args(["sh"], ["-c", "true"], agnhost) == ["sh", "-c", "true"]
    assert images.process_args([], [], None) == []
    mine, err = images.image_config("me/app:1", {images.ANNOTATION: '{"me/app:1": {"entrypoint": ["/app"]}}'})
    assert err is None and mine == images.ImageConfig(("/app",))
    _, err = images.image_config("me/app:1", {images.ANNOTATION: '{"me/app:1": {"entrypoint": "/app"}}'})
    assert err == ('annotation podlife.io/images: "me/app:1" must be an object with "entrypoint" and "cmd" lists '
                   "of strings")


def test_spdy_syn_stream_headers_are_read_with_the_dictionary() -> None:
    # a SYN_STREAM as a client builds it: a name/value block compressed with the SPDY/3 dictionary
    block = b"".join([b"\x00\x00\x00\x02", b"\x00\x00\x00\x04port", b"\x00\x00\x00\x048080",
                      b"\x00\x00\x00\x0astreamtype", b"\x00\x00\x00\x04data"])
    z = zlib.compressobj(zdict=spdy3.DICTIONARY)
    packed = z.compress(block) + z.flush(zlib.Z_SYNC_FLUSH)
    body = (3).to_bytes(4, "big") + (0).to_bytes(4, "big") + b"\x00\x00" + packed
    frame = bytes([0x80, 3, 0, 1, 0]) + len(body).to_bytes(3, "big") + body
    codec = spdy3.Codec()
    got = codec.feed(frame[:5]) + codec.feed(frame[5:] + spdy3.Codec.data(3, b"hi", fin=True))
    assert [(f.control, f.kind, f.stream) for f in got] == [(True, spdy3.SYN_STREAM, 3), (False, 0, 3)]
    assert got[0].headers == {"port": "8080", "streamtype": "data"}
    assert (got[1].payload, got[1].flags) == (b"hi", spdy3.FLAG_FIN)
    # the reply's (empty) header block inflates with the dictionary on the other side
    reply = codec.syn_reply(3)
    assert reply[:4] == bytes([0x80, 3, 0, 2])
    assert zlib.decompressobj(zdict=spdy3.DICTIONARY).decompress(reply[12:]) == b"\x00\x00\x00\x00"


def test_the_pause_image_gets_the_built_in_pause() -> None:
    import signal
    import subprocess

    pause, err = images.image_config("registry.k8s.io/pause:3.9", {})
    assert err is None and pause is not None
    argv = images.builtin_program("registry.k8s.io/pause:3.9", images.process_args([], [], pause))
    # a Python any user may start (a pod with runAsUser: 1000, as pods.go's activeDeadlineSeconds test runs it)
    assert argv is not None and argv[:4] == [images.python_for_everyone(), "-I", "-S", "-c"]
    every = images.python_for_everyone()
    assert os.stat(every).st_mode & stat.S_IXOTH and os.path.samefile(
        subprocess.run([every, "-I", "-S", "-c", "import sys; print(sys.executable)"], capture_output=True,
                       text=True, timeout=30).stdout.strip(), every)
    # only the pause image's own /pause; any other program or image runs as given
    assert images.builtin_program("registry.k8s.io/pause:3.9", ["sh"]) is None
    assert images.builtin_program("busybox", ["/pause"]) is None
    # pause.c: -v prints the version; otherwise a warning (it is not PID 1), and SIGTERM ends it with 0
    assert subprocess.run([*argv, "-v"], capture_output=True, text=True, timeout=30).stdout == "pause.c v3.9\n"
    p = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert p.stderr is not None
    assert p.stderr.readline() == "Warning: pause should be the first process\n"
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 0
    assert p.stderr.read() == "Shutting down, got signal: Terminated\n"
    p.stderr.close()


def test_spdy_goaway_names_the_last_stream() -> None:
    frame = spdy3.Codec.goaway(7)
    assert frame == bytes([0x80, 3, 0, 7, 0, 0, 0, 8]) + (7).to_bytes(4, "big") + (0).to_bytes(4, "big")


def test_the_nonewprivs_image_gets_a_built_in_nnp() -> None:
    # security_context.go AllowPrivilegeEscalation: /nnp prints "Effective uid: N"; set-user-ID root, so 0 unless
    # the process has no_new_privs (a child started here has not: podlife sets it only in a container)
    import subprocess

    nnp, err = images.image_config("registry.k8s.io/e2e-test-images/nonewprivs:1.3", {})
    assert err is None and nnp is not None
    argv = images.builtin_program("registry.k8s.io/e2e-test-images/nonewprivs:1.3",
                                  images.process_args([], [], nnp))
    assert argv is not None and argv[:2] == ["/bin/sh", "-c"]
    assert subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout == "Effective uid: 0\n"
    assert images.builtin_program("registry.k8s.io/e2e-test-images/nonewprivs:1.3", ["sh"]) is None



def test_the_update_demo_images_are_agnhost_test_webservers() -> None:
    # test/images/nautilus/Dockerfile: FROM agnhost (ENTRYPOINT ["/agnhost"]), CMD ["test-webserver"]
    for image in ("registry.k8s.io/e2e-test-images/nautilus:1.7", "registry.k8s.io/e2e-test-images/kitten:1.7"):
        config, err = images.image_config(image, {})
        assert err is None and config is not None
        assert images.process_args([], [], config) == ["/agnhost", "test-webserver"]
        assert images.process_args([], ["--port", "8080"], config) == ["/agnhost", "--port", "8080"]
