"""Typed settings: one place that reads the environment."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, PositiveFloat, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEVELOPMENT_SECRET = "development-only-secret-change-me"


class Settings(BaseSettings):
    """Every knob Lethe reads, with prefix ``LETHE_`` unless named otherwise."""

    model_config = SettingsConfigDict(env_prefix="LETHE_", extra="ignore")

    environment: Literal["development", "production", "test"] = Field(
        "development",
        description="`production` refuses generated or default secrets.",
    )
    data_dir: Path = Field(
        Path(".lethe"),
        description="Folder for the embedded database and generated secrets.",
    )
    key_store: Path | None = Field(
        None,
        description="Folder of the key store: the key-encryption key and every wrapped data "
        "key (app/keys/). Unset: `keys` in the data folder, beside the database's files and "
        "never inside them, so dumps, WAL, replicas and database backups hold no key.",
    )
    database_url: str | None = Field(
        None,
        validation_alias=AliasChoices("DATABASE_URL", "LETHE_DATABASE_URL"),
        description="Owner connection (runs migrations). Unset: the embedded PostgreSQL.",
    )
    app_database_url: str | None = Field(
        None,
        description="Connection of the non-owner application role. Unset: derived from "
        "DATABASE_URL with user `app_db_role` and password `app_db_password`.",
    )
    app_db_role: str = Field("lethe_app", description="Name of the application's database role.")
    app_db_password: str | None = Field(
        None,
        description="Password of the application role. Unset in embedded mode: generated "
        "and kept in the data folder.",
    )
    db_pool_size: int = Field(10, ge=1, le=200, description="Connections per process.")
    read_database_urls: str | None = Field(
        None,
        description="Comma-separated streaming replicas of the database, as the application "
        "role: recall and read-only GETs are served there (round robin), once the replica has "
        "replayed the tenant's last forget (docs/deploying.md). Unset: everything on the "
        "primary.",
    )
    replica_gets: bool = Field(
        True,
        description="Serve GETs of memories from the replicas too (behind the same fence). "
        "Off: only recall goes there, so a client reads a memory it has just written.",
    )
    replica_fence: bool = Field(
        True,
        description="Check, before a read is served by a replica, that the replica has "
        "replayed the tenant's last forget. Off only to measure what it protects against: a "
        "lagging replica would then recall memories already forgotten.",
    )
    replica_wait_seconds: float = Field(
        0.05, ge=0, le=10,
        description="How long a read waits for a replica to replay the tenant's last forget "
        "before the primary serves it (counted in `lethe_replica_fallbacks_total`).",
    )
    replica_retry_seconds: float = Field(
        10.0, gt=0,
        description="How long a replica that failed its check (unreachable, or no longer a "
        "standby) is skipped before it is tried again.",
    )
    embedded_shared_buffers_mb: int | None = Field(
        None, ge=16, le=1_048_576,
        description="Shared buffers of the embedded PostgreSQL, in MB. Unset: a quarter of the "
        "machine's memory (or the container's limit), between 128 and 4,096. Applied when the "
        "server starts with no other connections.",
    )
    celery_broker_url: str | None = Field(
        None,
        validation_alias=AliasChoices("CELERY_BROKER_URL", "LETHE_CELERY_BROKER_URL"),
        description="Redis or RabbitMQ URL. Unset: kombu's SQLAlchemy transport on the database.",
    )
    task_metrics_dir: Path | None = Field(
        None,
        description="Folder where worker processes count task outcomes (prometheus_client "
        "multiprocess files), read by `/metrics` on the same host and by the worker's own "
        "metrics port. Unset: `task-metrics` in the data folder.",
    )
    worker_metrics_port: int = Field(
        0, ge=0, le=65535,
        description="Port on which `lethe worker` serves its task outcomes for Prometheus, "
        "for workers on another host than the API. 0: not served.",
    )
    admin_token: str | None = Field(
        None,
        description="Bearer token allowed to create tenants. Unset in embedded mode: "
        "generated, kept in the data folder (mode 0600) and printed at start.",
    )
    secret_key: str | None = Field(
        None,
        description="Signs console session cookies. Unset in embedded mode: generated.",
    )
    receipt_signing_key: str | None = Field(
        None,
        description="Ed25519 private key that signs compliance receipts: PEM (PKCS#8) or "
        "the base64url of its 32 raw bytes. Unset: generated once into the data folder "
        "(mode 0600); required in `production`, where nothing is generated.",
    )
    max_body_bytes: int = Field(
        1_048_576, ge=1024, description="Largest request body accepted; larger → 413."
    )
    idempotency_retention_days: float = Field(
        7.0, gt=0, description="How long operation records answer replays before pruning."
    )
    prune_interval_seconds: float = Field(
        3600.0, gt=0, description="How often beat prunes expired operation records."
    )
    decay_interval_seconds: float = Field(
        3600.0, gt=0, description="How often beat moves overdue memories to suspect."
    )
    expiry_interval_seconds: float = Field(
        60.0, gt=0, description="How often beat deprecates memories past their `expires_at` "
        "(recall leaves them out from the instant itself).",
    )
    consolidate_interval_seconds: float = Field(
        21600.0, gt=0,
        description="How often beat collapses near-duplicate live memories of each subject "
        "into the newest.",
    )
    retention_interval_seconds: float = Field(
        86400.0, gt=0,
        description="How often beat quarantines memories deprecated past the tenant's window "
        "and forgets those quarantined past theirs (windows are days, so daily suffices).",
    )
    vector_lists_interval_seconds: float = Field(
        3600.0, gt=0,
        description="How often beat checks that the IVFFlat index large subjects' recall "
        "walks exists and suits the table (its size, and what was written since the build), "
        "and builds it again if not.",
    )
    erasure_batch_size: int = Field(
        2000, ge=1, le=50_000,
        description="Memories an erasure tombstones per committed batch (its checkpoint).",
    )
    requeue_after_seconds: float = Field(
        300.0, gt=0,
        description="How long an accepted job (ingestion, maintenance, access export, "
        "invalidation) or erasure may stay pending untouched before beat sends its message "
        "again: the send after its commit failed (the broker was down) or the broker lost it. "
        "Sending twice is harmless.",
    )
    requeue_interval_seconds: float = Field(
        60.0, gt=0, description="How often beat looks for accepted jobs whose message was lost.",
    )
    erasure_sweep_interval_seconds: float = Field(
        60.0, gt=0, description="How often beat settles and re-sends erasures.",
    )
    maintenance_batch_size: int = Field(
        1000, ge=1, le=100_000,
        description="Memories a ladder job (decay, retention) moves per transaction, so a "
        "large run never holds a tenant's audit chain lock for long.",
    )
    console_session_hours: float = Field(
        8.0, gt=0, description="Lifetime of a console login."
    )
    embedding_provider: Literal["local", "openai"] = Field(
        "local", description="`local` MiniLM or an OpenAI-compatible `/embeddings` endpoint."
    )
    embedding_model_path: str | None = Field(
        None, description="Local sentence-transformers model folder; unset: the packaged MiniLM."
    )
    embedding_api_url: str | None = Field(None, description="Base URL of the embeddings API.")
    embedding_api_key: str | None = Field(None, description="Bearer key of the embeddings API.")
    embedding_api_model: str = Field(
        "all-MiniLM-L6-v2", description="Model name sent to the embeddings API."
    )
    embedding_batch_size: int = Field(64, ge=1, le=2048, description="Texts per embedding call.")
    embedding_threads: int = Field(
        1, ge=1, le=64,
        description="Torch threads per local embedding call. 1 suits a server embedding many "
        "requests in parallel; raise it for bulk loads in a process of their own.",
    )
    embedding_process: bool = Field(
        False,
        description="Run the local model in a child process of its own, so its Python never "
        "holds the interpreter lock that request threads need. `lethe api` and `lethe serve` "
        "turn it on for the API unless it is set.",
    )

    webhooks_allow_private: bool = Field(
        False,
        description="Let webhook URLs resolve to private, loopback, link-local or other "
        "non-public addresses. Off: such URLs are refused at registration and at every "
        "delivery (a receiver inside the network is reachable only when this is on).",
    )
    webhooks_timeout_seconds: float = Field(
        10.0, gt=0, le=60, description="How long one webhook delivery attempt may take."
    )
    webhooks_retry_seconds: list[PositiveFloat] = Field(
        [5, 30, 120, 600, 3600, 21600, 43200, 86400],
        min_length=1, max_length=20,
        description="Waits before each retry of a failed webhook delivery, in order; after "
        "the last one the delivery is marked failed.",
    )

    judge_url: str | None = Field(
        None,
        description="Base URL of an OpenAI-compatible chat-completions API that decides the "
        "memory pairs the contradiction rule is unsure about (it receives both texts). Unset: "
        "the deterministic rule decides alone.",
    )
    judge_model: str = Field("gpt-4o-mini", description="Model name sent to the judge API.")
    judge_api_key: str | None = Field(None, description="Bearer key of the judge API.")
    judge_timeout_seconds: float = Field(
        5.0, gt=0, le=120,
        description="A judge slower than this is ignored; the deterministic verdict stands.",
    )
    judge_max_pairs: int = Field(
        3, ge=0, le=20, description="Borderline pairs one write may ask the judge about."
    )

    tracemalloc_file: Path | None = Field(
        None,
        description="Benchmarks only: trace the API's allocations and append, every "
        "`tracemalloc_seconds`, those grown most since the first interval to this file "
        "(app/core/memtrace.py). Slows every allocation.",
    )
    tracemalloc_seconds: float = Field(
        60.0, gt=0, description="Interval of the allocation snapshots (`tracemalloc_file`).",
    )

    @model_validator(mode="after")
    def _refuse_default_secrets(self) -> Settings:
        if self.environment == "production":
            for name in ("admin_token", "secret_key"):
                value = getattr(self, name)
                if not value or value == DEVELOPMENT_SECRET or len(value) < 24:
                    raise ValueError(f"LETHE_{name.upper()} must be set (≥ 24 chars) in production")
        return self

    @property
    def embedded(self) -> bool:
        return self.database_url is None


@lru_cache
def get_settings() -> Settings:
    return Settings()
