"""Turning a posted form into a validated API model, with errors by field for the page."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)


def field_errors(exc: ValidationError, *, prefix: str = "") -> dict[str, str]:
    """``{"half_lives.situational": "Input should be greater than 0"}``: one message per
    field, named by its dotted path, shown beside that field."""
    errors: dict[str, str] = {}
    for error in exc.errors():
        path = ".".join(str(part) for part in error["loc"])
        name = f"{prefix}{path}" if path else prefix.rstrip(".") or "form"
        errors.setdefault(name, str(error["msg"]).removeprefix("Value error, "))
    return errors


def parse(model: type[Model], data: dict[str, Any]) -> tuple[Model | None, dict[str, str]]:
    """The model, or None and the errors by field."""
    try:
        return model.model_validate(data), {}
    except ValidationError as exc:
        return None, field_errors(exc)
