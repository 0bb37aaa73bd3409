"""Routes that speak other memory services' HTTP dialects over Lethe's own services."""
