"""Console staff: named people of a tenant who sign in with an email and a password."""
