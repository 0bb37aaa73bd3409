"""Encryption at rest: data keys per (tenant, subject), wrapped by a key-encryption key and
kept in a key store outside the database's files (docs/decisions.md, "Encryption at rest").

`subjects` is what the rest of Lethe calls; `store` is the interface a key store (the
embedded folder of `files`, or an external KMS) implements.
"""
