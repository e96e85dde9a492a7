"""Inventory, prices and discounts: product search, stock per warehouse, tiered prices, discount codes."""

from __future__ import annotations

import re
from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.normalize import norm_id, norm_text
from probegate.probes.tool import ToolContext, ToolError, tool

DOMAIN = "inventory"
SKU_HINT = "use search_products to find the SKU"
CATEGORIES = ["furniture", "electronics", "supplies"]


def words(text: str) -> list[str]:
    """Lower-case word tokens of ``text``."""
    return re.findall(r"[a-z0-9]+", norm_text(text))


def convert(ctx: ToolContext, amount_eur: float, currency: str) -> float:
    """``amount_eur`` in ``currency`` at the world's rates, rounded (JPY to whole yen)."""
    rate = ctx.state["currency_rates"][currency]
    return round(amount_eur * rate, 0 if currency == "JPY" else 2)


@tool(
    "search_products",
    DOMAIN,
    "Find products by words in their name or description (and optionally a category); returns SKUs and list "
    "prices. Do NOT use it for stock levels (use check_stock) or quantity prices (use get_price).",
    s.params(
        ["query"],
        query=s.string("Words to search for, e.g. 'office chair'.", minLength=1, maxLength=100),
        category=s.enum(CATEGORIES, "Only this category."),
    ),
    returns="products[] of {sku, name, category, unit_price, currency} (best match first, at most 10)",
)
def search_products(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    query = set(words(args["query"]))
    scored = []
    for sku, p in ctx.state.get("products", {}).items():
        if args.get("category", p["category"]) != p["category"]:
            continue
        score = len(query & set(words(f"{sku} {p['name']} {p['category']} {p.get('description', '')}")))
        if score:
            scored.append((-score, sku, p))
    scored.sort(key=lambda t: (t[0], t[1]))
    return {
        "products": [
            {"sku": sku, "name": p["name"], "category": p["category"], "unit_price": p["unit_price"], "currency": "EUR"}
            for _, sku, p in scored[:10]
        ]
    }


@tool(
    "check_stock",
    DOMAIN,
    "Units in stock for a SKU, per warehouse, with its reorder point and units already on order. "
    "Do NOT use it for prices (use get_price).",
    s.params(["sku"], sku=s.SKU, warehouse=s.WAREHOUSE),
    returns="sku, name, warehouse ('all' or one), in_stock, by_warehouse{}, reorder_point, on_order, supplier_id",
)
def check_stock(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    product = ctx.entity("products", args["sku"], "SKU", SKU_HINT)
    stock: dict[str, int] = product["stock"]
    where = args.get("warehouse", "all")
    return {
        "sku": product["id"],
        "name": product["name"],
        "warehouse": where,
        "in_stock": stock.get(where, 0) if where != "all" else sum(stock.values()),
        "by_warehouse": dict(stock),
        "reorder_point": product["reorder_point"],
        "on_order": product.get("on_order", 0),
        "supplier_id": product["supplier"],
    }


def unit_price(product: dict[str, Any], quantity: int) -> tuple[float, str]:
    """The unit price (EUR) for ``quantity`` units and the tier that gave it (``base`` or ``10+``)."""
    price, tier = float(product["unit_price"]), "base"
    for step in sorted(product.get("price_tiers", []), key=lambda t: t["min_qty"]):
        if quantity >= step["min_qty"]:
            price, tier = float(step["unit_price"]), f"{step['min_qty']}+"
    return price, tier


@tool(
    "get_price",
    DOMAIN,
    "Price of a quantity of one SKU, with volume tiers applied, optionally converted to another currency. "
    "Do NOT use it to apply discount codes (use apply_discount).",
    s.params(
        ["sku"],
        sku=s.SKU,
        quantity=s.integer("Units (default 1).", 1, 10_000),
        currency=s.CURRENCY,
    ),
    returns="sku, name, quantity, unit_price, total, currency, tier ('base' or e.g. '10+'), price_tiers[]",
)
def get_price(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    product = ctx.entity("products", args["sku"], "SKU", SKU_HINT)
    quantity, currency = args.get("quantity", 1), args.get("currency", "EUR")
    price, tier = unit_price(product, quantity)
    return {
        "sku": product["id"],
        "name": product["name"],
        "quantity": quantity,
        "unit_price": convert(ctx, price, currency),
        "total": convert(ctx, price * quantity, currency),
        "currency": currency,
        "tier": tier,
        "price_tiers": product.get("price_tiers", []),
    }


def _check_code(ctx: ToolContext, code: str, discount: dict[str, Any], args: dict[str, Any]) -> None:
    today = ctx.today.isoformat()
    if today > discount["valid_until"]:
        raise ToolError("expired", f"discount code {code} expired on {discount['valid_until']}", "ask for a current code")
    if today < discount.get("valid_from", today):
        raise ToolError("not_yet_valid", f"discount code {code} is valid from {discount['valid_from']}")
    if args["amount"] < discount.get("min_amount", 0):
        raise ToolError(
            "below_minimum",
            f"discount code {code} needs an amount of at least {discount['min_amount']} EUR",
        )
    tier = discount.get("requires_tier")
    if tier:
        if "customer_id" not in args:
            raise ToolError("customer_required", f"discount code {code} is for {tier}-tier customers only",
                            "pass the customer_id so eligibility can be checked")
        customer = ctx.entity("customers", args["customer_id"], "customer", "use search_customers")
        if customer["tier"] != tier:
            raise ToolError("not_eligible", f"{customer['id']} is {customer['tier']} tier; {code} needs {tier}")


@tool(
    "apply_discount",
    DOMAIN,
    "Apply a discount code to an amount in EUR: checks validity, minimum amount and eligibility, and returns the "
    "discounted total. It only calculates; it does not change any order. Do NOT use it for volume prices (use get_price).",
    s.params(
        ["amount", "code"],
        amount=s.number("Amount before discount, in EUR.", 0, 10_000_000),
        code=s.string("Discount code, e.g. SPRING10.", minLength=1, maxLength=40),
        customer_id=s.CUSTOMER_ID,
    ),
    returns="code, percent, amount, discount, total, currency='EUR'",
)
def apply_discount(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    code = norm_id(args["code"])
    discount = ctx.state.get("discounts", {}).get(code)
    if discount is None:
        raise ToolError("not_found", f"unknown discount code {args['code']!r}", "check the code's spelling")
    _check_code(ctx, code, discount, args)
    off = round(args["amount"] * discount["percent"] / 100, 2)
    return {
        "code": code,
        "percent": discount["percent"],
        "amount": args["amount"],
        "discount": off,
        "total": round(args["amount"] - off, 2),
        "currency": "EUR",
    }


TOOLS = [search_products, check_stock, get_price, apply_discount]
