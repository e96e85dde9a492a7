"""Calendar and reminders of the world's user: events, free slots, reminders."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from probegate.probes.catalog import _schema as s
from probegate.probes.normalize import norm_email
from probegate.probes.tool import ToolContext, ToolError, tool

DOMAIN = "calendar"


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _events_on(ctx: ToolContext, day: str) -> list[dict[str, Any]]:
    events = [dict(e, id=i) for i, e in ctx.state.get("events", {}).items() if e["date"] == day]
    return sorted(events, key=lambda e: (e["start"], e["id"]))


def _not_past(ctx: ToolContext, day: str, clock: str, what: str) -> None:
    if datetime.fromisoformat(f"{day}T{clock}") <= ctx.now:
        now = ctx.now.strftime("%Y-%m-%d %H:%M")
        raise ToolError("in_past", f"{what} at {day} {clock} is not in the future", f"it is now {now}")


@tool(
    "list_events",
    DOMAIN,
    "List calendar events on a date, or from date to end_date inclusive. "
    "Do NOT use it for reminders (use list_reminders).",
    s.params(
        ["date"],
        date=s.date("First day (YYYY-MM-DD)."),
        end_date=s.date("Last day (YYYY-MM-DD, inclusive); default: same as date."),
    ),
    returns="events[] of {id, title, date, start, end, attendees, location}",
)
def list_events(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    first, last = args["date"], args.get("end_date", args["date"])
    if last < first:
        raise ToolError("bad_range", f"end_date {last} is before date {first}", "pass end_date on or after date")
    events = [dict(e, id=i) for i, e in ctx.state.get("events", {}).items() if first <= e["date"] <= last]
    return {"events": sorted(events, key=lambda e: (e["date"], e["start"], e["id"]))}


@tool(
    "find_free_slots",
    DOMAIN,
    "Free time slots on a date within working hours that fit a meeting of the given length. "
    "Do NOT use it to book anything (use create_event).",
    s.params(
        ["date", "duration_minutes"],
        date=s.date("Day to search (YYYY-MM-DD)."),
        duration_minutes=s.integer("Meeting length in minutes (15-480).", 15, 480),
    ),
    returns="date, working_hours, slots[] of {start, end} (HH:MM, each at least duration_minutes long; none in the past)",
)
def find_free_slots(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    hours = ctx.state["calendar"]["working_hours"]
    cursor, close = _minutes(hours["start"]), _minutes(hours["end"])
    today = ctx.today.isoformat()
    if args["date"] < today:
        return {"date": args["date"], "working_hours": hours, "slots": []}  # the past has no free time
    if args["date"] == today:
        cursor = max(cursor, _minutes(ctx.now.strftime("%H:%M")))
    slots = []
    for event in _events_on(ctx, args["date"]) + [{"start": _hhmm(close), "end": _hhmm(close)}]:
        start = min(_minutes(event["start"]), close)
        if start - cursor >= args["duration_minutes"]:
            slots.append({"start": _hhmm(cursor), "end": _hhmm(start)})
        cursor = max(cursor, _minutes(event["end"]))
    return {"date": args["date"], "working_hours": hours, "slots": slots}


@tool(
    "create_event",
    DOMAIN,
    "Book a calendar event (a meeting) and invite attendees. Refuses times that overlap "
    "another event. Do NOT use it for personal reminders (use create_reminder).",
    s.params(
        ["title", "date", "start", "end"],
        title=s.text("Event title.", 200),
        date=s.date("Day (YYYY-MM-DD)."),
        start=s.time("Start time, 24-hour HH:MM."),
        end=s.time("End time, 24-hour HH:MM, after start."),
        attendees=s.array(s.email("Attendee email address."), "Attendee email addresses."),
        location=s.string("Room or place.", maxLength=200),
    ),
    side_effect="event",
    returns="event_id, title, date, start, end, attendees, location, status='booked'",
)
def create_event(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    day, start, end = args["date"], args["start"], args["end"]
    if _minutes(end) <= _minutes(start):
        raise ToolError("bad_range", f"end {end} is not after start {start}", "pass an end time later than start")
    _not_past(ctx, day, start, "the event")
    for other in _events_on(ctx, day):
        if _minutes(other["start"]) < _minutes(end) and _minutes(start) < _minutes(other["end"]):
            raise ToolError(
                "conflict",
                f"{start}-{end} overlaps {other['id']} '{other['title']}' ({other['start']}-{other['end']})",
                "use find_free_slots to find a free time on that day",
            )
    event_id = ctx.next_id("event", "EVT-")
    event = {
        "title": args["title"],
        "date": day,
        "start": start,
        "end": end,
        "attendees": [norm_email(a) for a in args.get("attendees", [])],
        "location": args.get("location", ""),
        "created": True,
    }
    ctx.state.setdefault("events", {})[event_id] = event
    ctx.side_effect("create_event", "event", event_id, args)
    return {"event_id": event_id, **{k: v for k, v in event.items() if k != "created"}, "status": "booked"}


@tool(
    "create_reminder",
    DOMAIN,
    "Set a personal reminder that notifies the user at a date and time. "
    "Do NOT use it to invite other people (use create_event) or to message someone (use send_email).",
    s.params(
        ["title", "date", "time"],
        title=s.text("What to be reminded of.", 200),
        date=s.date("Day (YYYY-MM-DD)."),
        time=s.time("Time of day, 24-hour HH:MM."),
        note=s.string("Optional details.", maxLength=2000),
    ),
    side_effect="reminder",
    returns="reminder_id, title, date, time, note, status='scheduled'",
)
def create_reminder(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    _not_past(ctx, args["date"], args["time"], "the reminder")
    reminder_id = ctx.next_id("reminder", "REM-")
    reminder = {
        "title": args["title"],
        "date": args["date"],
        "time": args["time"],
        "note": args.get("note", ""),
        "created": True,
    }
    ctx.state.setdefault("reminders", {})[reminder_id] = reminder
    ctx.side_effect("create_reminder", "reminder", reminder_id, args)
    return {"reminder_id": reminder_id, **{k: v for k, v in reminder.items() if k != "created"}, "status": "scheduled"}


@tool(
    "list_reminders",
    DOMAIN,
    "List the user's reminders, optionally only those on one date. Do NOT use it for meetings (use list_events).",
    s.params(date=s.date("Only reminders on this day (YYYY-MM-DD).")),
    returns="reminders[] of {id, title, date, time, note}",
)
def list_reminders(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    items = [
        {"id": i, "title": r["title"], "date": r["date"], "time": r["time"], "note": r.get("note", "")}
        for i, r in ctx.state.get("reminders", {}).items()
        if "date" not in args or r["date"] == args["date"]
    ]
    return {"reminders": sorted(items, key=lambda r: (r["date"], r["time"], r["id"]))}


TOOLS = [list_events, find_free_slots, create_event, create_reminder, list_reminders]
