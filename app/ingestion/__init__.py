"""Asynchronous ingestion: accept memories and messages now, apply them in a Celery task."""
