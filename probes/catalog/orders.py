"""Orders and logistics: customer orders, shipment tracking, purchase orders to suppliers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.normalize import norm_id
from probegate.probes.tool import ToolContext, ToolError, tool

DOMAIN = "orders"
CANCELLABLE = ("processing", "on_hold")
ORDER_STATUS = ["processing", "on_hold", "shipped", "delivered", "cancelled"]
TRACKING = s.ident("Tracking number, e.g. TRK-88002.", r"^[Tt][Rr][Kk]-[0-9]{5}$")
ORDER_HINT = "order ids look like ORD-5001; use list_orders to find a customer's orders"


def order_lines(ctx: ToolContext, order: dict[str, Any]) -> list[dict[str, Any]]:
    """The order's items with product names and line totals (EUR)."""
    products = ctx.state.get("products", {})
    return [
        {
            "sku": item["sku"],
            "name": products.get(item["sku"], {}).get("name", item["sku"]),
            "quantity": item["quantity"],
            "unit_price": item["unit_price"],
            "line_total": round(item["quantity"] * item["unit_price"], 2),
        }
        for item in order["items"]
    ]


def _summary(ctx: ToolContext, order: dict[str, Any]) -> dict[str, Any]:
    lines = order_lines(ctx, order)
    return {
        "order_id": order["id"],
        "customer_id": order["customer_id"],
        "date": order["date"],
        "status": order["status"],
        "total": round(sum(line["line_total"] for line in lines), 2),
        "currency": order.get("currency", "EUR"),
    }


@tool(
    "get_order",
    DOMAIN,
    "Full details of one customer order: customer, items, total, status, shipping address and tracking number. "
    "Do NOT use it for purchase orders to suppliers or for the shipment's progress (use track_shipment).",
    s.params(["order_id"], order_id=s.ORDER_ID),
    returns="order_id, customer_id, customer, date, status, items[], total, currency, ship_to, carrier, tracking_number",
)
def get_order(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    order = ctx.entity("orders", args["order_id"], "order", ORDER_HINT)
    customer = ctx.state["customers"].get(order["customer_id"], {})
    return {
        **_summary(ctx, order),
        "customer": customer.get("company", ""),
        "items": order_lines(ctx, order),
        "ship_to": order.get("ship_to", ""),
        "carrier": order.get("carrier"),
        "tracking_number": order.get("tracking_number"),
    }


@tool(
    "list_orders",
    DOMAIN,
    "List customer orders, optionally for one customer and/or with one status (newest first). "
    "Do NOT use it when you already have the order id (use get_order).",
    s.params(
        customer_id=s.CUSTOMER_ID,
        status=s.enum(ORDER_STATUS, "Only orders with this status."),
    ),
    returns="orders[] of {order_id, customer_id, date, status, total, currency}",
)
def list_orders(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if "customer_id" in args:
        ctx.entity("customers", args["customer_id"], "customer", "use search_customers to find the customer id")
    wanted = norm_id(args.get("customer_id", ""))
    orders = [
        _summary(ctx, dict(o, id=i))
        for i, o in ctx.state.get("orders", {}).items()
        if (not wanted or norm_id(o["customer_id"]) == wanted) and args.get("status", o["status"]) == o["status"]
    ]
    orders.sort(key=lambda o: (o["date"], o["order_id"]), reverse=True)
    return {"orders": orders}


@tool(
    "track_shipment",
    DOMAIN,
    "Carrier tracking for a shipment: status, estimated delivery and scan events. Needs the tracking number "
    "(get it from get_order). Do NOT pass an order id here.",
    s.params(["tracking_number"], tracking_number=TRACKING),
    returns="tracking_number, order_id, carrier, status, eta, events[] of {date, time, location, description}",
)
def track_shipment(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    shipment = ctx.entity("shipments", args["tracking_number"], "tracking number", "get the tracking number from get_order")
    return {
        "tracking_number": shipment["id"],
        "order_id": shipment["order_id"],
        "carrier": shipment["carrier"],
        "status": shipment["status"],
        "eta": shipment.get("eta"),
        "events": shipment.get("events", []),
    }


def _check_supplier_terms(ctx: ToolContext, product: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    supplier = ctx.state["suppliers"][product["supplier"]]
    if args["quantity"] < supplier["min_order_qty"]:
        raise ToolError(
            "below_minimum",
            f"{supplier['name']} accepts orders of at least {supplier['min_order_qty']} units",
            f"order {supplier['min_order_qty']} or more units of {product['id']}",
        )
    earliest = (ctx.today + timedelta(days=supplier["lead_time_days"])).isoformat()
    if "deliver_by" in args and args["deliver_by"] < earliest:
        raise ToolError(
            "cannot_deliver_by",
            f"{supplier['name']} cannot deliver {product['id']} by {args['deliver_by']}; earliest is {earliest}",
            f"leave deliver_by out or pass {earliest} or later",
        )
    return supplier, earliest


@tool(
    "place_order",
    DOMAIN,
    "Place a purchase order with the product's supplier to restock a warehouse. This commits money: "
    "do NOT use it to look up stock or prices (use check_stock / get_price) or for customer orders.",
    s.params(
        ["sku", "quantity"],
        sku=s.SKU,
        quantity=s.integer("Units to order (1-10000).", 1, 10_000),
        warehouse=s.WAREHOUSE,
        deliver_by=s.date("Latest acceptable delivery date (YYYY-MM-DD)."),
        note=s.string("Note for the supplier.", maxLength=1000),
    ),
    side_effect="order",
    returns="po_id (PO-n), sku, product, quantity, supplier, supplier_id, warehouse, unit_cost, total_cost, expected_delivery, status='placed'",
)
def place_order(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    product = ctx.entity("products", args["sku"], "SKU", "use search_products to find the SKU")
    supplier, earliest = _check_supplier_terms(ctx, product, args)
    po_id = ctx.next_id("po", "PO-")
    order = {
        "sku": product["id"],
        "quantity": args["quantity"],
        "supplier": product["supplier"],
        "warehouse": args.get("warehouse", "Berlin"),
        "unit_cost": product["cost"],
        "total_cost": round(product["cost"] * args["quantity"], 2),
        "expected_delivery": earliest,
        "note": args.get("note", ""),
    }
    ctx.state.setdefault("purchase_orders", {})[po_id] = order
    ctx.state["products"][product["id"]]["on_order"] = product.get("on_order", 0) + args["quantity"]
    ctx.side_effect("place_order", "order", po_id, args)
    return {
        "po_id": po_id,
        "product": product["name"],
        **order,
        "supplier_id": order["supplier"],
        "supplier": supplier["name"],
        "status": "placed",
    }


@tool(
    "cancel_order",
    DOMAIN,
    "Cancel a customer order that has not shipped yet (status processing or on_hold). "
    "Do NOT use it for shipped or delivered orders (open a ticket with create_ticket instead).",
    s.params(["order_id", "reason"], order_id=s.ORDER_ID, reason=s.text("Why the order is cancelled.", 500)),
    side_effect="order_cancel",
    returns="order_id, status='cancelled', previous_status, reason",
)
def cancel_order(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    order = ctx.entity("orders", args["order_id"], "order", ORDER_HINT)
    if order["status"] not in CANCELLABLE:
        raise ToolError(
            "not_cancellable",
            f"{order['id']} is {order['status']}; only processing or on_hold orders can be cancelled",
            "for shipped or delivered orders open a ticket with create_ticket",
        )
    stored = ctx.state["orders"][order["id"]]
    stored.update(status="cancelled", cancel_reason=args["reason"])
    ctx.side_effect("cancel_order", "order_cancel", order["id"], args)
    return {"order_id": order["id"], "status": "cancelled", "previous_status": order["status"], "reason": args["reason"]}


TOOLS = [get_order, list_orders, track_shipment, place_order, cancel_order]
