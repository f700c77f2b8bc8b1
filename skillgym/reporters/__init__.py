"""Reporters: subscribers on the event bus. The runner never prints; these do."""
