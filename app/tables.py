"""Every table of the schema, registered with the metadata (for Alembic and schema checks).

It lives above the domain packages, which own their tables, so that `app.core` imports none
of them.
"""


def import_all_models() -> None:
    """Import each domain's models so their tables join `SQLModel.metadata`."""
    import app.access.models
    import app.artifacts.models
    import app.audit.models
    import app.erasure.models
    import app.forgetting.models
    import app.holds.models
    import app.idempotency.models
    import app.invalidation.models
    import app.memories.models
    import app.sources.models
    import app.staff.models
    import app.tenant_settings.models
    import app.tenants.models
    import app.webhooks.models  # noqa: F401
