"""Workspace files and reports: list, read, write (a side effect)."""

from __future__ import annotations

from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.normalize import norm_path
from probegate.probes.tool import ToolContext, ToolError, tool

DOMAIN = "files"
FILES_HINT = "use list_files to see the workspace"


def _path(raw: str) -> str:
    path = norm_path(raw)
    if ".." in path.split("/"):
        raise ToolError("bad_path", f"path {raw!r} leaves the workspace", "use an absolute path without '..'")
    return path


@tool(
    "list_files",
    DOMAIN,
    "List workspace files under a folder (default: everything), with sizes. "
    "Do NOT use it to search the knowledge base (use search_documents).",
    s.params(folder=s.string("Folder, e.g. /reports (default /).", pattern=r"^/[A-Za-z0-9._/-]{0,200}$")),
    returns="folder, files[] of {path, size (characters), updated}",
)
def list_files(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    folder = _path(args.get("folder", "/"))
    prefix = folder.rstrip("/") + "/"
    files = [
        {"path": path, "size": len(f["content"]), "updated": f.get("updated", "")}
        for path, f in sorted(ctx.state.get("files", {}).items())
        if path.startswith(prefix)
    ]
    return {"folder": folder, "files": files}


@tool(
    "read_file",
    DOMAIN,
    "Read a workspace file's full content. Do NOT use it for knowledge-base documents (use get_document).",
    s.params(["path"], path=s.PATH),
    returns="path, size, updated, content",
)
def read_file(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    path = _path(args["path"])
    entry = ctx.state.get("files", {}).get(path)
    if entry is None:
        raise ToolError("not_found", f"no file {path}", FILES_HINT)
    return {"path": path, "size": len(entry["content"]), "updated": entry.get("updated", ""), "content": entry["content"]}


@tool(
    "write_file",
    DOMAIN,
    "Create a workspace file (or replace one with overwrite=true), e.g. to save a report. "
    "Do NOT use it to send anything to anyone (use send_email).",
    s.params(
        ["path", "content"],
        path=s.PATH,
        content=s.string("The full file content (text).", maxLength=100_000),
        overwrite=s.boolean("Replace the file if it exists (default false)."),
    ),
    side_effect="file",
    returns="path, size, created (false when an existing file was replaced), status='written'",
)
def write_file(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    path = _path(args["path"])
    if any(path == ro or path.startswith(ro + "/") for ro in ctx.state["workspace"]["read_only"]):
        raise ToolError("read_only", f"{path} is in a read-only folder", "write under /reports or /notes instead")
    files = ctx.state.setdefault("files", {})
    exists = path in files
    if exists and not args.get("overwrite", False):
        raise ToolError("exists", f"{path} already exists", "pass overwrite=true to replace it, or choose another path")
    files[path] = {"content": args["content"], "updated": ctx.now.strftime("%Y-%m-%d %H:%M"), "written": True}
    ctx.side_effect("write_file", "file", path, args)
    return {"path": path, "size": len(args["content"]), "created": not exists, "status": "written"}


TOOLS = [list_files, read_file, write_file]
