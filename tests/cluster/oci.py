#!/usr/bin/env python3
"""Writes a single-layer linux/amd64 image as an OCI image layout tar that `ctr images import`
takes (containerd names it from the `io.containerd.image.name` annotation).

    tests/cluster/oci.py --out IMAGE.tar --name REF --entrypoint /pause FILE:/DEST ...
    tests/cluster/oci.py --out IMAGE.tar --name REF --entrypoint /bin/x --rootfs DIR [--env K=V] [--cmd C]
                         [--user UID[:GID]]

Files keep their mode; owner 0:0 (a --rootfs tree keeps its owners), mtime 0; gzip without name or
mtime: the same files give the same bytes. A --rootfs tree leaves out what the runtime mounts
(dev, proc, sys). Only for the test cluster's own images (tier 3's pause, NATS and the stand-in for
rocm/infera, inference-perf's); the operator's image is release/image.py's.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import tarfile


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


SKIPPED = {"dev", "proc", "sys"}


def add_tree(tar, root):
    """Every entry below `root`, sorted, mtime 0; the runtime's mount points empty."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in SKIPPED]
            for d in sorted(SKIPPED):  # a set's order changes with each process's hash seed
                info = tarfile.TarInfo(d)
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
                tar.addfile(info)
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            path = os.path.join(dirpath, name)
            info = tar.gettarinfo(path, arcname=os.path.normpath(os.path.join(rel, name)))
            info.mtime = 0
            info.uname = info.gname = ""
            if info.isfile():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            elif info.isdir() or info.issym() or info.islnk():
                tar.addfile(info)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--entrypoint", required=True)
    parser.add_argument("--rootfs", help="a whole root filesystem, instead of FILEs")
    parser.add_argument("--env", action="append", default=[], metavar="K=V")
    parser.add_argument("--cmd", action="append", default=[], metavar="ARG")
    parser.add_argument("--user", help="the config's User (UID[:GID]); root when not given")
    parser.add_argument("files", nargs="*", metavar="FILE:/DEST")
    args = parser.parse_args()

    blobs = {}

    def blob(media_type, data, **extra):
        digest = hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data), **extra}

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if args.rootfs:
            add_tree(tar, args.rootfs)
        for spec in args.files:
            src, dest = spec.split(":", 1)
            info = tarfile.TarInfo(dest.lstrip("/"))
            info.size = os.path.getsize(src)
            info.mode = os.stat(src).st_mode & 0o7777
            info.mtime = 0
            with open(src, "rb") as f:
                tar.addfile(info, f)
    layer = raw.getvalue()
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0) as gz:
        gz.write(layer)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {"Entrypoint": [args.entrypoint], "Env": args.env, "Cmd": args.cmd},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(layer).hexdigest()}"]},
    }
    if args.user:
        config["config"]["User"] = args.user
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": blob("application/vnd.oci.image.config.v1+json", canonical(config)),
        "layers": [blob("application/vnd.oci.image.layer.v1.tar+gzip", packed.getvalue())],
    }
    names = {"io.containerd.image.name": args.name, "org.opencontainers.image.ref.name": args.name}
    descriptor = blob("application/vnd.oci.image.manifest.v1+json", canonical(manifest), annotations=names)
    files = {
        "oci-layout": canonical({"imageLayoutVersion": "1.0.0"}),
        "index.json": canonical({"schemaVersion": 2, "manifests": [descriptor]}),
        **{f"blobs/sha256/{digest}": data for digest, data in blobs.items()},
    }
    with tarfile.open(args.out, "w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            info.mtime = 0
            tar.addfile(info, io.BytesIO(files[name]))


if __name__ == "__main__":
    main()
