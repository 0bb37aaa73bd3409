"""Each rule has one owner in app/: read from the source, so a second place fails here.

The lifecycle (app/memories/lifecycle.py) alone assigns a memory's revision and state and
alone destroys content; the memory store (app/memories/store.py, with its read-only half
queries.py) alone builds statements on the memory tables and the public Memory shape.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
LIFECYCLE = "memories/lifecycle.py"
STORE = {"memories/store.py", "memories/queries.py", "memories/models.py"}
TABLE_MODELS = {"Memory", "MemoryVersion", "ProvenanceEdge"}
STATEMENTS = {"select", "update", "delete", "insert", "sa_select"}
# Recall's hot path reads the tables with raw, read-only SQL: the one documented exception.
RAW_SQL = re.compile(r"\b(FROM|JOIN|UPDATE|INTO)\s+(memory|memory_version|provenance_edge)\b",
                     re.IGNORECASE)


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(APP.rglob("*.py")):
        yield str(path.relative_to(APP)), ast.parse(path.read_text(), str(path))


def _in_functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """Every node with the name of the top-level function or class holding it."""
    for top in tree.body:
        name = getattr(top, "name", "<module>")
        for node in ast.walk(top):
            yield name, node


def _assigned(attribute: str) -> list[tuple[str, str]]:
    found = []
    for module, tree in _modules():
        for function, node in _in_functions(tree):
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign)
                       else [])
            for target in targets:
                for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(part, ast.Attribute) and part.attr == attribute:
                        found.append((module, function))
    return found


def _called(name: str) -> list[tuple[str, str]]:
    return [(module, function) for module, tree in _modules()
            for function, node in _in_functions(tree)
            if isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id == name)
                or (isinstance(node.func, ast.Attribute) and node.func.attr == name))]


def test_the_revision_is_assigned_in_one_function() -> None:
    assert _assigned("revision") == [(LIFECYCLE, "new_revision")]


def test_the_state_is_assigned_only_by_transition() -> None:
    assert _assigned("state") == [(LIFECYCLE, "transition")]
    assert _assigned("state_changed_at") == [(LIFECYCLE, "transition")]


def test_every_change_takes_the_new_revision_step() -> None:
    callers = {caller for caller in _called("new_revision")}
    assert callers == {
        (LIFECYCLE, "transition"), (LIFECYCLE, "doubt"), (LIFECYCLE, "confirm"),
        (LIFECYCLE, "destroy_content"),  # the strike
        ("memories/service.py", "create"),  # a slot's new version
        ("memories/service.py", "_revised"),  # update and revert
    }


def test_content_events_are_named_in_one_place() -> None:
    """Every change to a memory's content is audited through the lifecycle (`authored`)."""
    actions = {"memory.created", "memory.corrected", "memory.reverted", "memory.struck"}
    named = {module for module, tree in _modules()
             for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and node.value in actions}
    assert named == {LIFECYCLE}
    assert {module for module, _ in _called("authored")} == {LIFECYCLE, "memories/service.py"}
    assert set(_called("written")) == {("memories/service.py", "create")}


def test_content_is_destroyed_in_one_place() -> None:
    """Legal holds are checked in `destroy_content`: nothing else may purge or redact."""
    for step in ("redact_versions", "redact_answers"):
        assert set(_called(step)) == {(LIFECYCLE, "destroy_content")}, step
    for step in ("purge_contents", "redact_answers_of", "tombstone_rows"):
        assert set(_called(step)) == {(LIFECYCLE, "tombstone")}, step
    assert {module for module, _ in _called("destroy_content")} == {
        "forgetting/forget.py", "forgetting/describe.py"}
    # The tombstone of many: one memory's (destroy_content), an erasure's batches and a
    # closed session's working memories.
    assert set(_called("tombstone")) == {(LIFECYCLE, "destroy_content"),
                                         ("erasure/cascade.py", "erase_batch"),
                                         ("forgetting/sessions.py", "close")}


def test_only_the_store_builds_statements_on_the_memory_tables() -> None:
    offenders = []
    for module, tree in _modules():
        if module in STORE:
            continue
        for function, node in _in_functions(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.id if isinstance(node.func, ast.Name) else (
                node.func.attr if isinstance(node.func, ast.Attribute) else "")
            names = {n.id for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Name)}
            if callee in TABLE_MODELS or (callee in STATEMENTS and names & TABLE_MODELS):
                offenders.append((module, function, callee))
            if callee == "add" and names & TABLE_MODELS:
                offenders.append((module, function, callee))
    assert offenders == []


def test_raw_sql_on_the_memory_tables_is_the_store_s_or_recall_s() -> None:
    offenders = [
        (module, function) for module, tree in _modules()
        if module not in STORE and not module.startswith("recall/")
        for function, node in _in_functions(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and RAW_SQL.search(node.value)
    ]
    assert offenders == []


def test_the_public_shape_is_built_in_one_place() -> None:
    assert {module for module, _ in _called("MemoryPublic")} == {"memories/store.py"}
