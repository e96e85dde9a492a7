"""Email: the user's inbox, the address book, and sending mail (a side effect)."""

from __future__ import annotations

from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.normalize import norm_email, norm_text
from probegate.probes.tool import ToolContext, tool

DOMAIN = "email"
MESSAGE_ID = s.ident("Inbox message id, e.g. MSG-201.", r"^[Mm][Ss][Gg]-[0-9]{3,4}$")


def _contacts(ctx: ToolContext) -> list[dict[str, Any]]:
    people = [dict(c, id=i) for i, c in sorted(ctx.state.get("contacts", {}).items())]
    for cust_id, cust in sorted(ctx.state.get("customers", {}).items()):
        contact = cust["contact"]
        people.append(
            {
                "id": cust_id,
                "name": contact["name"],
                "email": contact["email"],
                "phone": contact.get("phone", ""),
                "role": contact.get("role", "customer contact"),
                "company": cust["company"],
            }
        )
    return people


@tool(
    "find_contact",
    DOMAIN,
    "Search the address book (colleagues, suppliers and customer contacts) by name, company, role or email "
    "and get their email address. Do NOT use it for customer accounts, tiers or orders (use get_customer).",
    s.params(["query"], query=s.string("Part of a name, company, role or email.", minLength=1, maxLength=100)),
    returns="contacts[] of {id, name, email, phone, role, company}",
)
def find_contact(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    wanted = norm_text(args["query"])
    found = [
        c
        for c in _contacts(ctx)
        if any(wanted in norm_text(c.get(f, "")) for f in ("name", "email", "company", "role"))
    ]
    return {"contacts": found}


@tool(
    "list_inbox",
    DOMAIN,
    "List messages in the user's inbox (newest first), optionally only unread ones or only from one sender. "
    "Returns summaries; use read_email for the full text. Do NOT use it to find someone's address (use find_contact).",
    s.params(
        unread_only=s.boolean("Only unread messages."),
        sender=s.string("Only messages whose sender name or address contains this.", maxLength=100),
        limit=s.integer("Most messages to return (1-50, default 20).", 1, 50),
    ),
    returns="messages[] of {id, from, from_name, date, time, subject, unread, preview}",
)
def list_inbox(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    sender = norm_text(args.get("sender", ""))
    items = []
    for msg_id, msg in ctx.state.get("inbox", {}).items():
        if args.get("unread_only") and msg.get("read"):
            continue
        if sender and sender not in norm_text(f"{msg['from_name']} {msg['from']}"):
            continue
        preview = " ".join(msg["body"].split())[:120]
        items.append(
            {
                "id": msg_id,
                "from": msg["from"],
                "from_name": msg["from_name"],
                "date": msg["date"],
                "time": msg["time"],
                "subject": msg["subject"],
                "unread": not msg.get("read", False),
                "preview": preview,
            }
        )
    items.sort(key=lambda m: (m["date"], m["time"], m["id"]), reverse=True)
    return {"messages": items[: args.get("limit", 20)]}


@tool(
    "read_email",
    DOMAIN,
    "Read one inbox message in full. Do NOT use it to send or reply (use send_email).",
    s.params(["message_id"], message_id=MESSAGE_ID),
    returns="id, from, from_name, to, cc, date, time, subject, body",
)
def read_email(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    msg = ctx.entity("inbox", args["message_id"], "message", "use list_inbox to see message ids")
    return {
        "id": msg["id"],
        "from": msg["from"],
        "from_name": msg["from_name"],
        "to": msg.get("to", ctx.state["user"]["email"]),
        "cc": msg.get("cc", []),
        "date": msg["date"],
        "time": msg["time"],
        "subject": msg["subject"],
        "body": msg["body"],
    }


@tool(
    "send_email",
    DOMAIN,
    "Send an email from the user's mailbox to one recipient (plus optional cc). This really sends: "
    "do NOT use it for drafts, for notes to yourself (use create_reminder) or when the recipient's "
    "address is unknown (look it up with find_contact or get_customer first).",
    s.params(
        ["to", "subject", "body"],
        to=s.email("Recipient email address, e.g. name@example.com."),
        subject=s.text("Subject line.", 300),
        body=s.text("Plain-text message body."),
        cc=s.array(s.email("Email address."), "Addresses to copy.", 10),
        in_reply_to=MESSAGE_ID,
    ),
    side_effect="email",
    returns="message_id (OUT-n), status='sent', to, cc, subject, sent_at",
)
def send_email(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if "in_reply_to" in args:
        ctx.entity("inbox", args["in_reply_to"], "message", "use list_inbox to see message ids")
    message_id = ctx.next_id("email", "OUT-")
    sent_at = ctx.now.strftime("%Y-%m-%d %H:%M")
    mail = {
        "to": norm_email(args["to"]),
        "cc": [norm_email(a) for a in args.get("cc", [])],
        "subject": args["subject"],
        "body": args["body"],
        "in_reply_to": args.get("in_reply_to"),
        "sent_at": sent_at,
    }
    ctx.state.setdefault("outbox", {})[message_id] = mail
    ctx.side_effect("send_email", "email", message_id, args)
    return {"message_id": message_id, "status": "sent", "to": mail["to"], "cc": mail["cc"],
            "subject": mail["subject"], "sent_at": sent_at}


TOOLS = [find_contact, list_inbox, read_email, send_email]
