"""HTTP plumbing above the domains: the request's unit of work and its dependencies."""
