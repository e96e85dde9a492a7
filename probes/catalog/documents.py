"""Knowledge base: contracts, policies, FAQs, manuals and reports; search, then read in full."""

from __future__ import annotations

from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.catalog.inventory import words
from probegate.probes.tool import ToolContext, tool

DOMAIN = "documents"
KINDS = ["contract", "policy", "faq", "manual", "report"]
STOPWORDS = frozenset("a an and are as at be by for from how in is it of on or our the to we what when with".split())
SNIPPET = 240


def _score(query: set[str], doc: dict[str, Any]) -> int:
    title = set(words(doc["title"] + " " + " ".join(map(str, doc.get("tags", [])))))
    body = words(doc["text"])
    return sum(3 * (w in title) + min(body.count(w), 5) for w in query)


def _snippet(query: set[str], text: str) -> str:
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()] or [""]
    best = max(paragraphs, key=lambda p: (len(query & set(words(p))), -paragraphs.index(p)))
    flat = " ".join(best.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


@tool(
    "search_documents",
    DOMAIN,
    "Search the company knowledge base (contracts, policies, FAQs, manuals, reports) by keywords; returns "
    "titles and a matching snippet. Read the full text with get_document. Do NOT use it for support tickets "
    "(use list_tickets) or workspace files (use list_files).",
    s.params(
        ["query"],
        query=s.string("Keywords, e.g. 'Globex delivery penalty'.", minLength=1, maxLength=200),
        kind=s.enum(KINDS, "Only this kind of document."),
        limit=s.integer("Most results (1-10, default 5).", 1, 10),
    ),
    returns="results[] of {doc_id, title, kind, updated, score, snippet}",
)
def search_documents(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    query = set(words(args["query"])) - STOPWORDS
    hits = []
    for doc_id, doc in ctx.state.get("documents", {}).items():
        if args.get("kind", doc["kind"]) != doc["kind"]:
            continue
        score = _score(query, doc)
        if score:
            hits.append((score, doc_id, doc))
    hits.sort(key=lambda h: (-h[0], h[1]))
    return {
        "results": [
            {
                "doc_id": doc_id,
                "title": doc["title"],
                "kind": doc["kind"],
                "updated": doc.get("updated", ""),
                "score": score,
                "snippet": _snippet(query, doc["text"]),
            }
            for score, doc_id, doc in hits[: args.get("limit", 5)]
        ]
    }


@tool(
    "get_document",
    DOMAIN,
    "The full text of one knowledge-base document (can be several pages). Do NOT use it to search "
    "(use search_documents first to find the doc_id).",
    s.params(["doc_id"], doc_id=s.ident("Document id, e.g. DOC-301.", r"^[Dd][Oo][Cc]-[0-9]{3}$")),
    returns="doc_id, title, kind, updated, length (characters), text",
)
def get_document(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    doc = ctx.entity("documents", args["doc_id"], "document", "use search_documents to find document ids")
    return {
        "doc_id": doc["id"],
        "title": doc["title"],
        "kind": doc["kind"],
        "updated": doc.get("updated", ""),
        "length": len(doc["text"]),
        "text": doc["text"],
    }


TOOLS = [search_documents, get_document]
