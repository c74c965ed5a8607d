"""Tier 3's model hub: the part of the Hugging Face Hub's HTTP API that huggingface_hub's downloads
use, over the repositories in a directory, so that `hf download`, `snapshot_download` and
transformers' `from_pretrained` run for real without the internet (tests/cluster/README.md).

  hub.py --root DIR --listen HOST:PORT [--port-file FILE]

DIR/<org>/<name>/ is one model repository at one commit (named by its content). Served, as
huggingface_hub 1.x calls them (hf_api.py `repo_info`, `list_repo_tree`; file_download.py
`get_hf_file_metadata`, `http_get`):
  GET  /api/models/<repo>/revision/<rev>      {"id", "sha", "siblings": [{"rfilename"}]}
  GET  /api/models/<repo>/tree/<rev>[/<path>]  [{"type": "file", "path", "size", "oid"}]
  HEAD|GET /<repo>/resolve/<rev>/<file>        the file, with X-Repo-Commit and ETag
A missing repository, revision or file answers 404 with the X-Error-Code the Hub sends
(RepoNotFound, RevisionNotFound, EntryNotFound), which huggingface_hub turns into its own errors.
Revisions: `main` or the commit. Every request is logged, so a test can see what was fetched.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


def _files(repo: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in repo.rglob("*") if p.is_file())


def _commit(repo: pathlib.Path) -> str:
    h = hashlib.sha1()
    for f in _files(repo):
        h.update(str(f.relative_to(repo)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _blob_id(data: bytes) -> str:
    """The file's git blob id, as the Hub's `oid` and ETag of a non-LFS file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Hub(BaseHTTPRequestHandler):
    root: pathlib.Path
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        print(f"{self.address_string()} {fmt % args}", file=sys.stderr, flush=True)

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None, head=False):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _error(self, code: str, message: str, head=False):
        body = json.dumps({"error": message}).encode()
        self._send(404, body, {"X-Error-Code": code, "X-Error-Message": message,
                               "Content-Type": "application/json"}, head)

    def _repo(self, org: str, name: str, rev: str, head=False):
        repo = self.root / org / name
        if not repo.is_dir() or "." in (org[:1], name[:1]):
            self._error("RepoNotFound", f"Repository {org}/{name} not found", head)
            return None, None
        sha = _commit(repo)
        if rev not in ("main", sha):
            self._error("RevisionNotFound", f"Invalid rev id: {rev}", head)
            return None, None
        return repo, sha

    def _handle(self, head: bool):
        parts = [unquote(p) for p in urlsplit(self.path).path.split("/") if p]
        if len(parts) >= 6 and parts[:2] == ["api", "models"] and parts[4] in ("revision", "tree"):
            repo, sha = self._repo(parts[2], parts[3], parts[5], head)
            if repo is None:
                return
            if parts[4] == "revision":
                doc = {"id": f"{parts[2]}/{parts[3]}", "modelId": f"{parts[2]}/{parts[3]}", "sha": sha,
                       "private": False, "gated": False, "disabled": False,
                       "siblings": [{"rfilename": str(f.relative_to(repo))} for f in _files(repo)]}
            else:
                under = "/".join(parts[6:])
                doc = [{"type": "file", "path": str(f.relative_to(repo)), "size": f.stat().st_size,
                        "oid": _blob_id(f.read_bytes())}
                       for f in _files(repo) if str(f.relative_to(repo)).startswith(under)]
            self._send(200, json.dumps(doc).encode(), {"Content-Type": "application/json"}, head)
        elif len(parts) >= 5 and parts[2] == "resolve":
            repo, sha = self._repo(parts[0], parts[1], parts[3], head)
            if repo is None:
                return
            path = repo.joinpath(*parts[4:]).resolve()
            if not path.is_file() or repo.resolve() not in path.parents:
                self._error("EntryNotFound", f"{'/'.join(parts[4:])} does not exist on main", head)
                return
            data = path.read_bytes()
            self._send(200, data, {"X-Repo-Commit": sha, "ETag": f'"{_blob_id(data)}"',
                                   "Content-Type": "application/octet-stream"}, head)
        else:
            self._send(404, b"not found", {"Content-Type": "text/plain"}, head)

    def do_GET(self):
        self._handle(head=False)

    def do_HEAD(self):
        self._handle(head=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, type=pathlib.Path)
    parser.add_argument("--listen", required=True, help="HOST:PORT (PORT 0 picks one)")
    parser.add_argument("--port-file", type=pathlib.Path, help="where to write the port once listening")
    args = parser.parse_args()
    host, _, port = args.listen.rpartition(":")
    Hub.root = args.root.resolve()
    server = ThreadingHTTPServer((host, int(port)), Hub)
    if args.port_file:
        args.port_file.write_text(f"{server.server_address[1]}\n")
    print(f"hub: {Hub.root} on http://{host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
