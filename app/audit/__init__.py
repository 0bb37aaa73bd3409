"""The audit trail: an append-only, per-tenant hash-chained record of state changes."""
