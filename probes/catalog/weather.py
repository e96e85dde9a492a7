"""Weather and time: current conditions, a five-day forecast, local time in a city."""

from __future__ import annotations

from datetime import date as Date
from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.normalize import norm_text
from probegate.probes.tool import ToolContext, ToolError, parse_offset, tool

DOMAIN = "weather"
CITY = s.string("City name, e.g. Berlin or New York.", minLength=1, maxLength=80)
UNITS = s.enum(["celsius", "fahrenheit"], "Temperature unit (default celsius).")


def find_city(ctx: ToolContext, query: str) -> tuple[str, dict[str, Any]]:
    """The city ``query`` names (case-insensitive; aliases such as NYC count).

    Raises:
        ToolError: ``not_found`` for a city the weather service does not cover.
    """
    wanted = norm_text(query)
    cities: dict[str, Any] = ctx.state.get("cities", {})
    for name, city in sorted(cities.items()):
        if wanted == norm_text(name) or wanted in (norm_text(a) for a in city.get("aliases", [])):
            return name, city
    known = ", ".join(sorted(cities))
    raise ToolError("not_found", f"unknown city {query!r}", f"cities covered: {known}")


def _temp(celsius: float, units: str) -> float:
    return round(celsius * 9 / 5 + 32, 1) if units == "fahrenheit" else float(celsius)


def local_now(ctx: ToolContext, offset: str) -> tuple[str, str, str]:
    """The world's "now" in a city with UTC ``offset``: (date, HH:MM, weekday)."""
    moment = ctx.now - ctx.utc_offset() + parse_offset(offset)
    return moment.date().isoformat(), moment.strftime("%H:%M"), moment.strftime("%A")


@tool(
    "get_weather",
    DOMAIN,
    "Current weather in a city: temperature, condition, humidity and wind. "
    "Do NOT use it for future days (use get_forecast) or for the local time (use get_time).",
    s.params(["city"], city=CITY, units=UNITS),
    returns="city, country, observed_at, temperature, units, condition, humidity_pct, wind_kph",
)
def get_weather(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    name, city = find_city(ctx, args["city"])
    units = args.get("units", "celsius")
    cur = city["current"]
    day, clock, _ = local_now(ctx, city["utc_offset"])
    return {
        "city": name,
        "country": city["country"],
        "observed_at": f"{day} {clock}",
        "temperature": _temp(cur["temp_c"], units),
        "units": units,
        "condition": cur["condition"],
        "humidity_pct": cur["humidity_pct"],
        "wind_kph": cur["wind_kph"],
    }


def _forecast_days(ctx: ToolContext, name: str, city: dict[str, Any], args: dict[str, Any]) -> list[dict[str, Any]]:
    days: list[dict[str, Any]] = city.get("forecast", [])
    if "date" not in args:
        return days[: args.get("days", 3)]
    chosen = [d for d in days if d["date"] == args["date"]]
    if not chosen:
        span = f"{days[0]['date']} to {days[-1]['date']}" if days else "no days"
        raise ToolError(
            "out_of_range",
            f"no forecast for {name} on {args['date']}",
            f"forecasts cover {span}; pass one of those dates or use days=N",
        )
    return chosen


@tool(
    "get_forecast",
    DOMAIN,
    "Daily weather forecast for a city: for one date, or for the next N days starting today "
    "(the service covers five days). Do NOT use it for the weather right now (use get_weather).",
    s.params(
        ["city"],
        city=CITY,
        date=s.date("One day to forecast (YYYY-MM-DD). Leave out to get the next `days` days."),
        days=s.integer("How many days from today (1-5, default 3); ignored when date is given.", 1, 5),
        units=UNITS,
    ),
    returns="city, units, days[] of {date, weekday, condition, high, low, precipitation_mm, precip_chance_pct}",
)
def get_forecast(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    name, city = find_city(ctx, args["city"])
    units = args.get("units", "celsius")
    days = [
        {
            "date": d["date"],
            "weekday": Date.fromisoformat(d["date"]).strftime("%A"),
            "condition": d["condition"],
            "high": _temp(d["high_c"], units),
            "low": _temp(d["low_c"], units),
            "precipitation_mm": d["precipitation_mm"],
            "precip_chance_pct": d["precip_chance_pct"],
        }
        for d in _forecast_days(ctx, name, city, args)
    ]
    return {"city": name, "units": units, "days": days}


@tool(
    "get_time",
    DOMAIN,
    "The current local date, time, weekday and UTC offset in a city. Use it to learn today's date. "
    "Do NOT use it for weather.",
    s.params(["city"], city=CITY),
    returns="city, timezone, utc_offset, date, time (HH:MM), weekday",
)
def get_time(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    name, city = find_city(ctx, args["city"])
    day, clock, weekday = local_now(ctx, city["utc_offset"])
    return {
        "city": name,
        "timezone": city["timezone"],
        "utc_offset": city["utc_offset"],
        "date": day,
        "time": clock,
        "weekday": weekday,
    }


TOOLS = [get_weather, get_forecast, get_time]
