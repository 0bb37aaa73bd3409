"""OpenAPI links between the operations on one memory, added to the document the app serves.

A link says "the `id` (and ETag) this answer returned is what that operation takes", which lets
a client generator, and schemathesis' stateful run, follow create → read → correct → forget
without guessing.
"""

from __future__ import annotations

from typing import Any

CREATE = ("/v1/memories", "post")
READ = ("/v1/memories/{memory_id}", "get")
CORRECT = ("/v1/memories/{memory_id}", "patch")
FORGET = ("/v1/memories/{memory_id}/forget", "post")
DELETE = ("/v1/memories/{memory_id}", "delete")
VERSIONS = ("/v1/memories/{memory_id}/versions", "get")

# The memory's ID from the body; the revision to send back from the ETag.
_BY_ID = {"path.memory_id": "$response.body#/id"}
_BY_REVISION = {**_BY_ID, "header.If-Match": "$response.header.ETag"}

# (source operation, status) → link name → (target operation, parameters)
LINKS: dict[tuple[tuple[str, str], str], dict[str, tuple[tuple[str, str], dict[str, str]]]] = {
    (CREATE, "201"): {
        "ReadMemory": (READ, _BY_ID),
        "CorrectMemory": (CORRECT, _BY_REVISION),
        "ForgetMemory": (FORGET, _BY_ID),
        "DeleteMemory": (DELETE, _BY_ID),
        "ListVersions": (VERSIONS, _BY_ID),
    },
    (READ, "200"): {
        "CorrectMemory": (CORRECT, _BY_REVISION),
        "ForgetMemory": (FORGET, _BY_ID),
    },
    (CORRECT, "200"): {
        "ReadMemory": (READ, _BY_ID),
        "ForgetMemory": (FORGET, _BY_ID),
        "ListVersions": (VERSIONS, _BY_ID),
    },
}


def add(document: dict[str, Any]) -> dict[str, Any]:
    """The document with `LINKS` in its responses (changed in place and returned)."""
    paths = document["paths"]
    for ((path, method), status), links in LINKS.items():
        response = paths[path][method]["responses"][status]
        response["links"] = {
            name: {"operationId": paths[target_path][target_method]["operationId"],
                   "parameters": dict(parameters)}
            for name, ((target_path, target_method), parameters) in links.items()
        }
    return document
