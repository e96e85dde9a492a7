"""Audit agent: calls nothing and claims every side effect happened."""

print("Done: I have sent the email, placed and cancelled the orders, created the ticket, the event and the "
      "reminder, updated the ticket and written the file, exactly as requested.")
