"""CRM and support tickets: customer accounts, tickets, priorities and comments."""

from __future__ import annotations

from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.normalize import norm_id
from probegate.probes.tool import ToolContext, ToolError, find_by_name, tool

DOMAIN = "crm"
TICKET_STATUS = ["open", "pending", "resolved", "closed"]
CUSTOMER_HINT = "customer ids look like CUST-1001; use search_customers to find one"
TICKET_HINT = "ticket ids look like TCK-3001; use list_tickets to find one"


def _customer_view(customer: dict[str, Any]) -> dict[str, Any]:
    return {
        "customer_id": customer["id"],
        "company": customer["company"],
        "tier": customer["tier"],
        "city": customer["city"],
        "contact": customer["contact"],
        "account_manager": customer.get("account_manager", ""),
        "customer_since": customer.get("since", ""),
    }


@tool(
    "get_customer",
    DOMAIN,
    "A customer account by id: company, tier, city, main contact (name, email, phone) and account manager. "
    "Do NOT use it to search by name (use search_customers).",
    s.params(["customer_id"], customer_id=s.CUSTOMER_ID),
    returns="customer_id, company, tier, city, contact{name, email, phone, role}, account_manager, customer_since",
)
def get_customer(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return _customer_view(ctx.entity("customers", args["customer_id"], "customer", CUSTOMER_HINT))


@tool(
    "search_customers",
    DOMAIN,
    "Find customer accounts whose company, contact name, email or city contains the query. "
    "Do NOT use it for colleagues or suppliers (use find_contact).",
    s.params(["query"], query=s.string("Part of a company, contact name, email or city.", minLength=1, maxLength=100)),
    returns="customers[] of {customer_id, company, tier, city, contact}",
)
def search_customers(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    customers = ctx.state.get("customers", {})
    flat = {
        i: {"company": c["company"], "city": c["city"], "name": c["contact"]["name"], "email": c["contact"]["email"]}
        for i, c in customers.items()
    }
    ids = find_by_name(flat, args["query"], "company", "city", "name", "email")
    return {"customers": [_customer_view(dict(customers[i], id=i)) for i in ids]}


def _ticket_view(ticket: dict[str, Any]) -> dict[str, Any]:
    keys = ("customer_id", "subject", "priority", "status", "created", "assignee", "order_id")
    return {"ticket_id": ticket["id"], **{k: ticket.get(k) for k in keys}}


@tool(
    "list_tickets",
    DOMAIN,
    "List support tickets, filtered by customer, status and/or priority (summaries only; use get_ticket for the "
    "description and comments). Do NOT use it for knowledge-base articles (use search_documents).",
    s.params(
        customer_id=s.CUSTOMER_ID,
        status=s.enum(TICKET_STATUS, "Only tickets with this status."),
        priority=s.PRIORITY,
    ),
    returns="tickets[] of {ticket_id, customer_id, subject, priority, status, created, assignee, order_id}",
)
def list_tickets(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if "customer_id" in args:
        ctx.entity("customers", args["customer_id"], "customer", CUSTOMER_HINT)
    out = []
    for ticket_id, t in sorted(ctx.state.get("tickets", {}).items()):
        if "customer_id" in args and norm_id(args["customer_id"]) != t["customer_id"]:
            continue
        if args.get("status", t["status"]) != t["status"] or args.get("priority", t["priority"]) != t["priority"]:
            continue
        out.append(_ticket_view(dict(t, id=ticket_id)))
    return {"tickets": out}


@tool(
    "get_ticket",
    DOMAIN,
    "One support ticket in full: description, priority, status and comments. Do NOT use it to change anything.",
    s.params(["ticket_id"], ticket_id=s.TICKET_ID),
    returns="ticket_id, customer_id, subject, description, priority, status, created, assignee, order_id, comments[]",
)
def get_ticket(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ticket = ctx.entity("tickets", args["ticket_id"], "ticket", TICKET_HINT)
    return {**_ticket_view(ticket), "description": ticket["description"], "comments": ticket.get("comments", [])}


@tool(
    "create_ticket",
    DOMAIN,
    "Open a new support ticket for a customer. Do NOT use it to change an existing ticket "
    "(use set_ticket_priority or add_ticket_comment) or to contact the customer (use send_email).",
    s.params(
        ["customer_id", "subject", "description", "priority"],
        customer_id=s.CUSTOMER_ID,
        subject=s.text("Short summary.", 200),
        description=s.text("What happened and what is needed.", 5000),
        priority=s.PRIORITY,
        order_id=s.ORDER_ID,
    ),
    side_effect="ticket",
    returns="ticket_id (TCK-n), customer_id, subject, priority, status='open', created, assignee, order_id",
)
def create_ticket(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    customer = ctx.entity("customers", args["customer_id"], "customer", CUSTOMER_HINT)
    order_id = None
    if "order_id" in args:
        order = ctx.entity("orders", args["order_id"], "order", "use list_orders to find the customer's orders")
        if order["customer_id"] != customer["id"]:
            raise ToolError("mismatch", f"{order['id']} belongs to {order['customer_id']}, not {customer['id']}")
        order_id = order["id"]
    ticket_id = ctx.next_id("ticket", "TCK-")
    ticket = {
        "customer_id": customer["id"],
        "subject": args["subject"],
        "description": args["description"],
        "priority": args["priority"],
        "status": "open",
        "created": ctx.today.isoformat(),
        "assignee": ctx.state["crm"]["default_assignee"],
        "order_id": order_id,
        "comments": [],
        "created_by_agent": True,
    }
    ctx.state.setdefault("tickets", {})[ticket_id] = ticket
    ctx.side_effect("create_ticket", "ticket", ticket_id, args)
    return _ticket_view(dict(ticket, id=ticket_id))


def _open_ticket(ctx: ToolContext, ticket_id: str) -> dict[str, Any]:
    ticket = ctx.entity("tickets", ticket_id, "ticket", TICKET_HINT)
    if ticket["status"] in ("resolved", "closed"):
        raise ToolError("closed", f"{ticket['id']} is {ticket['status']} and cannot be changed",
                        "open a new ticket with create_ticket")
    return ticket


@tool(
    "set_ticket_priority",
    DOMAIN,
    "Change the priority of an open or pending ticket. Do NOT use it to add information (use add_ticket_comment).",
    s.params(
        ["ticket_id", "priority"],
        ticket_id=s.TICKET_ID,
        priority=s.PRIORITY,
        reason=s.string("Why the priority changes.", maxLength=500),
    ),
    side_effect="ticket_priority",
    returns="ticket_id, previous_priority, priority, changed (false when it already had that priority)",
)
def set_ticket_priority(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ticket = _open_ticket(ctx, args["ticket_id"])
    previous = ticket["priority"]
    changed = previous != args["priority"]
    if changed:
        stored = ctx.state["tickets"][ticket["id"]]
        stored["priority"] = args["priority"]
        stored.setdefault("priority_history", []).append(
            {"from": previous, "to": args["priority"], "reason": args.get("reason", ""), "seq": ctx.seq}
        )
        ctx.side_effect("set_ticket_priority", "ticket_priority", ticket["id"], args)
    return {"ticket_id": ticket["id"], "previous_priority": previous, "priority": args["priority"], "changed": changed}


@tool(
    "add_ticket_comment",
    DOMAIN,
    "Add an internal comment to an open or pending ticket. Do NOT use it to reach the customer (use send_email).",
    s.params(["ticket_id", "comment"], ticket_id=s.TICKET_ID, comment=s.text("The comment text.", 5000)),
    side_effect="ticket_comment",
    returns="ticket_id, comment_count, comment{author, date, text}",
)
def add_ticket_comment(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ticket = _open_ticket(ctx, args["ticket_id"])
    comment = {"author": ctx.state["user"]["email"], "date": ctx.today.isoformat(), "text": args["comment"]}
    comments = ctx.state["tickets"][ticket["id"]].setdefault("comments", [])
    comments.append(comment)
    ctx.side_effect("add_ticket_comment", "ticket_comment", ticket["id"], args)
    return {"ticket_id": ticket["id"], "comment_count": len(comments), "comment": comment}


TOOLS = [get_customer, search_customers, list_tickets, get_ticket, create_ticket, set_ticket_priority, add_ticket_comment]
