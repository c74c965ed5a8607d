#!/usr/bin/env python3
"""Writes an image of one static binary as an OCI image layout: one index of linux/amd64 and/or arm64.

    release/image.py --out DIR --version V [--binary NAME --source URL --licenses SPDX
                     --notices DIR] [--sbom FILE --sbom-out DIR] amd64=PATH arm64=PATH

Each platform's image is one layer holding only the static binary at /NAME (mode 0755, owner 0:0,
mtime 0) and, with --notices, the licence files of what it was built from under /licenses/: no
shell, no libc, no CA certificates. The config runs it as 65532:65532 (non-root, the uid the
operator's Deployment and the NATS StatefulSet set) and the root filesystem is never written to,
so `readOnlyRootFilesystem: true` holds. The defaults describe the operator image (in a cluster
kube-rs trusts the ServiceAccount's CA, /var/run/secrets/kubernetes.io/serviceaccount/ca.crt, and
the operator talks to nothing else); release/build.sh also writes the NATS image with it.

Reproducible by construction: sorted JSON, fixed timestamps (created = the epoch), gzip without
name or mtime. The same binaries give the same index digest, printed on stdout as sha256:....
The layout follows the OCI image spec v1.1 (image-layout.md, manifest.md, config.md,
image-index.md); `crane push DIR REF` (go-containerregistry, cmd/crane/cmd/push.go) reads it.

With --sbom, a CycloneDX SBOM (JSON) is attached to the index as an OCI 1.1 referrer, in a layout
of its own (--sbom-out): an artifact manifest (artifactType application/vnd.cyclonedx+json, the
empty config, the SBOM its one layer, `subject` the index), listed by the image index that the
distribution spec's referrers tag schema keeps under the tag `sha256-<index hex>`
(distribution-spec v1.1 spec.md, "Referrers Tag Schema"). `crane push SBOM-DIR REPO:sha256-<hex>`
publishes it so: a registry with the referrers API indexes the artifact by its subject, and
clients of one without it (OCI 1.1 clients, e.g. oras discover) read the tag.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile

USER = "65532:65532"
EPOCH = "1970-01-01T00:00:00Z"
SOURCE = "https://github.com/amd/infera"
MEDIA = {
    "index": "application/vnd.oci.image.index.v1+json",
    "manifest": "application/vnd.oci.image.manifest.v1+json",
    "config": "application/vnd.oci.image.config.v1+json",
    "layer": "application/vnd.oci.image.layer.v1.tar+gzip",
    # manifest.md, "Guidance for an Empty Descriptor"; CycloneDX's registered media type.
    "empty": "application/vnd.oci.empty.v1+json",
    "cyclonedx": "application/vnd.cyclonedx+json",
}
# OCI platform of each Krew/Go arch name (image-index.md: arm64 images carry variant v8).
PLATFORMS = {
    "amd64": {"architecture": "amd64", "os": "linux"},
    "arm64": {"architecture": "arm64", "os": "linux", "variant": "v8"},
}


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


class Layout:
    """An OCI image layout directory: blobs/sha256/<hex>, oci-layout, index.json."""

    def __init__(self, root):
        self.root = root
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(os.path.join(root, "blobs", "sha256"))

    def blob(self, media_type, data, **extra):
        digest = hashlib.sha256(data).hexdigest()
        with open(os.path.join(self.root, "blobs", "sha256", digest), "wb") as f:
            f.write(data)
        return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data), **extra}

    def finish(self, descriptor):
        with open(os.path.join(self.root, "oci-layout"), "wb") as f:
            f.write(canonical({"imageLayoutVersion": "1.0.0"}))
        with open(os.path.join(self.root, "index.json"), "wb") as f:
            f.write(canonical({"schemaVersion": 2, "mediaType": MEDIA["index"], "manifests": [descriptor]}))


def entry(tar, name, path, mode):
    info = tarfile.TarInfo(name)
    info.mode = mode
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if path is None:
        info.type = tarfile.DIRTYPE
        tar.addfile(info)
        return
    info.size = os.path.getsize(path)
    with open(path, "rb") as f:
        tar.addfile(info, f)


def layer(args, binary_path):
    """The layer tar (uncompressed, for the diff_id) and its gzip (for the blob)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        entry(tar, args.binary, binary_path, 0o755)
        if args.notices:
            entry(tar, "licenses", None, 0o755)
            for root, _, files in sorted(os.walk(args.notices)):
                relative = os.path.relpath(root, args.notices)
                if relative != ".":
                    entry(tar, os.path.join("licenses", relative), None, 0o755)
                for name in sorted(files):
                    entry(tar, os.path.normpath(os.path.join("licenses", relative, name)), os.path.join(root, name), 0o644)
    tar_bytes = raw.getvalue()
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(tar_bytes)
    return tar_bytes, packed.getvalue()


def image(layout, args, arch, binary_path):
    tar_bytes, gz_bytes = layer(args, binary_path)
    version = args.version
    labels = {
        "org.opencontainers.image.source": args.source,
        "org.opencontainers.image.title": args.binary,
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.licenses": args.licenses,
    }
    config = {
        **PLATFORMS[arch],
        "created": EPOCH,
        "config": {"User": USER, "Entrypoint": [f"/{args.binary}"], "Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(tar_bytes).hexdigest()}"]},
        "history": [{"created": EPOCH, "created_by": f"release/image.py: /{args.binary}"}],
    }
    manifest = {
        "schemaVersion": 2,
        "mediaType": MEDIA["manifest"],
        "config": layout.blob(MEDIA["config"], canonical(config)),
        "layers": [layout.blob(MEDIA["layer"], gz_bytes)],
        "annotations": {"org.opencontainers.image.version": version},
    }
    return layout.blob(MEDIA["manifest"], canonical(manifest), platform=PLATFORMS[arch])


def attach_sbom(out, sbom_path, subject):
    """The layout of `sbom_path` attached to the index `subject` (a descriptor): the artifact
    manifest and, as the layout's one entry, the referrers index that lists it."""
    layout = Layout(out)
    with open(sbom_path, "rb") as f:
        sbom = f.read()
    empty = layout.blob(MEDIA["empty"], b"{}")
    artifact = {
        "schemaVersion": 2,
        "mediaType": MEDIA["manifest"],
        "artifactType": MEDIA["cyclonedx"],
        "config": empty,
        "layers": [
            layout.blob(
                MEDIA["cyclonedx"], sbom, annotations={"org.opencontainers.image.title": os.path.basename(sbom_path)}
            )
        ],
        "subject": {k: subject[k] for k in ("mediaType", "digest", "size")},
        "annotations": {"org.opencontainers.image.created": EPOCH},
    }
    descriptor = layout.blob(
        MEDIA["manifest"], canonical(artifact), artifactType=MEDIA["cyclonedx"], annotations=artifact["annotations"]
    )
    referrers = {"schemaVersion": 2, "mediaType": MEDIA["index"], "manifests": [descriptor]}
    tag = subject["digest"].replace(":", "-")
    layout.finish(layout.blob(MEDIA["index"], canonical(referrers), annotations={"org.opencontainers.image.ref.name": tag}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the OCI layout directory (replaced)")
    parser.add_argument("--version", required=True)
    parser.add_argument("--binary", default="infera-operator", help="its name in the image, the entrypoint")
    parser.add_argument("--source", default=SOURCE, help="org.opencontainers.image.source")
    parser.add_argument("--licenses", default="Apache-2.0", help="org.opencontainers.image.licenses (SPDX)")
    parser.add_argument("--notices", help="a directory of licence files, copied to /licenses/")
    parser.add_argument("--sbom", help="a CycloneDX SBOM (JSON) to attach to the index as a referrer")
    parser.add_argument("--sbom-out", help="the layout of the attached SBOM (replaced); with --sbom")
    parser.add_argument("binaries", nargs="+", metavar="ARCH=PATH")
    args = parser.parse_args()
    if bool(args.sbom) != bool(args.sbom_out):
        sys.exit("image.py: --sbom and --sbom-out go together")
    binaries = dict(b.split("=", 1) for b in args.binaries)
    unknown = set(binaries) - set(PLATFORMS)
    if unknown:
        sys.exit(f"image.py: unknown arch {', '.join(sorted(unknown))} (known: {', '.join(PLATFORMS)})")
    layout = Layout(args.out)
    manifests = [image(layout, args, arch, binaries[arch]) for arch in sorted(binaries)]
    index = {
        "schemaVersion": 2,
        "mediaType": MEDIA["index"],
        "manifests": manifests,
        "annotations": {"org.opencontainers.image.version": args.version},
    }
    descriptor = layout.blob(
        MEDIA["index"], canonical(index), annotations={"org.opencontainers.image.ref.name": args.version}
    )
    layout.finish(descriptor)
    if args.sbom:
        attach_sbom(args.sbom_out, args.sbom, descriptor)
    print(descriptor["digest"])


if __name__ == "__main__":
    main()
