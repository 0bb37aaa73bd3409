"""`/compat/mem0`: the request and response shapes of mem0's open-source REST server."""
