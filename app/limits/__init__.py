"""Limits: per-key request rates, and per-tenant quotas on memories and ingest payloads."""
